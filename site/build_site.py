"""Build the course's website from the committed notebooks of both editions, without executing them.

    python site/build_site.py [OUT]      (python course.py site does this with the course's .venv)

OUT (default site/_build/html) gets the English edition, OUT/zh the Chinese one, OUT/_mathjax the MathJax both
use. Each edition is one Sphinx build (myst-nb reads the notebooks with their outputs; furo is the theme); the two
run side by side. MathJax and the browser tests' axe-core come from npm: `npm ci` in site/ installs the versions
package-lock.json pins into site/node_modules.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

SITE = Path(__file__).resolve().parent
REPO = SITE.parent
NOTEBOOKS = {"en": REPO / "notebooks", "zh": REPO / "notebooks" / "zh"}
MATHJAX = SITE / "node_modules" / "mathjax" / "es5"
# What MathJax's tex-chtml component loads at run time (fonts, TeX extensions, the menu, its accessibility parts).
MATHJAX_PARTS = ["tex-chtml.js", "input", "output/chtml", "ui", "a11y", "sre", "adaptors"]


class SiteError(RuntimeError):
    """A build that cannot start or did not finish; the message says what to do."""


def npm_packages() -> None:
    """Make sure site/node_modules holds MathJax and axe-core: `npm ci` there (package-lock.json's versions) if not."""
    if (MATHJAX / "tex-chtml.js").exists() and (SITE / "node_modules" / "axe-core").exists():
        return
    npm = shutil.which("npm")
    if npm is None:
        raise SiteError(f"MathJax is not installed in {SITE / 'node_modules'} and npm is not on PATH: install Node.js "
                        f"(Debian/Ubuntu: apt-get install npm), then run `npm ci` in {SITE}. The site serves MathJax "
                        "itself, so that the math renders offline.")
    print(f"Installing MathJax and axe-core into {SITE / 'node_modules'} (npm ci) ...", flush=True)
    if subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=SITE).returncode != 0:
        raise SiteError(f"`npm ci` in {SITE} failed (see above): it needs the npm registry once.")


def stage(lang: str, work: Path) -> Path:
    """A Sphinx source folder for one edition: its home page as index.md, a copy of its notebooks, and the theme's
    translations (locales/, compiled there by Sphinx, so the repository gets no .mo)."""
    src = work / "src" / lang
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    shutil.copyfile(SITE / "home" / f"{lang}.md", src / "index.md")
    for notebook in sorted(NOTEBOOKS[lang].glob("*.ipynb")):
        shutil.copyfile(notebook, src / notebook.name)
    shutil.copytree(SITE / "locales", src / "locales")
    return src


def copy_mathjax(out: Path) -> None:
    target = out / "_mathjax"
    for part in MATHJAX_PARTS:
        source, dest = MATHJAX / part, target / part
        if source.is_dir():
            shutil.copytree(source, dest, dirs_exist_ok=True)
        elif source.exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, dest)


def build(out: Path | None = None, work: Path | None = None, quiet: bool = True) -> Path:
    """Build both editions into `out` (English) and `out`/zh (Chinese); returns `out`. Raises SiteError."""
    out = Path(out or SITE / "_build" / "html").resolve()
    if out.exists() and not out.is_dir():
        raise SiteError(f"{out} is a file: give the folder the site goes in (new, or one to update).")
    npm_packages()
    work = Path(work or SITE / "_build" / "work").resolve()  # the course's own scratch, never beside OUT: staging
    # empties work/src, and OUT's neighbours are the user's
    out.mkdir(parents=True, exist_ok=True)
    if quiet:  # Sphinx says nothing then: one line, so a minute of silence does not look like a hang
        print(f"Building the English and the Chinese edition side by side into {out} (about a minute) ...",
              flush=True)
    runs = []
    for lang in ("en", "zh"):
        src = stage(lang, work)
        dest = out if lang == "en" else out / "zh"
        cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-c", str(SITE), "-d", str(work / "doctrees" / lang),
               "--keep-going", "-W", *(["-q"] if quiet else []), str(src), str(dest)]
        env = os.environ | {"COURSE_SITE_LANG": lang, "PYTHONHASHSEED": "0"}
        runs.append((lang, subprocess.Popen(cmd, env=env)))
    failed = [lang for lang, proc in runs if proc.wait() != 0]
    if failed:
        raise SiteError(f"Sphinx failed (or warned) for the {' and '.join(failed)} edition: see its messages above.")
    copy_mathjax(out)
    return out


def main(argv: list[str]) -> int:
    start, cpu = time.perf_counter(), time.process_time()
    try:
        out = build(Path(argv[0]) if argv else None)
    except SiteError as error:
        print(error, file=sys.stderr)
        return 1
    children = os.times()
    cpu_s = children.children_user + children.children_system + (time.process_time() - cpu)
    print(f"Site built in {time.perf_counter() - start:.0f} s ({cpu_s:.0f} s of CPU): {out / 'index.html'} "
          f"(English) and {out / 'zh' / 'index.html'} (Chinese).\n"
          f"Preview: python -m http.server -d {out} 8000, then open http://localhost:8000/")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
