/* Code blocks and wide outputs that scroll sideways can be scrolled with the keyboard too (focus, then arrows). */
function courseFocusableScrollers() {
  for (const box of document.querySelectorAll("pre, div.cell_output, div.output, .table-wrapper")) {
    if (box.scrollWidth > box.clientWidth + 1 || box.scrollHeight > box.clientHeight + 1) {
      if (!box.hasAttribute("tabindex")) box.setAttribute("tabindex", "0");
    }
  }
}
if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", courseFocusableScrollers);
} else {
  courseFocusableScrollers();
}
window.addEventListener("resize", courseFocusableScrollers);

// The language switch keeps the search words (?q=...): the search page in the other language searches them too.
function courseKeepQuery() {
  const link = document.querySelector("a[data-course-lang-switch]");
  if (link && location.search) link.href = link.href.split(/[?#]/)[0] + location.search;
}
// Search results: a summary from the chapter's own text, not from the download box, the figures' notes or raw TeX.
function courseCleanSearchText() {
  if (typeof Search === "undefined" || !Search.htmlToText || Search.courseClean) return;
  const original = Search.htmlToText;
  Search.htmlToText = (htmlString, anchor) => {
    const doc = new DOMParser().parseFromString(htmlString, "text/html");
    doc.querySelectorAll(".course-chapter-box, .course-figure, .course-check details, nav.course-lang-switch")
      .forEach((el) => el.remove());
    doc.querySelectorAll(".math").forEach((el) => {  // \(\mathrm{softmax}(x)_i\) -> softmax(x)_i
      el.textContent = el.textContent.replace(/\\[()[\]]/g, "")
        .replace(/\\(mathrm|text|operatorname|mathbf)\{([^}]*)\}/g, "$2")
        .replace(/\\([a-zA-Z]+)/g, "$1").replace(/[{}]/g, "").replace(/\s+/g, " ").trim();
    });
    return original(doc.documentElement.outerHTML, anchor);
  };
  Search.courseClean = true;
}
for (const run of [courseKeepQuery, courseCleanSearchText]) {
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", run);
  else run();
}
