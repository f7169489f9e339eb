"""One learner process supervised through one batch of exercises, whichever backend made it.

The process goes starting (a spare importing torch) -> import (the learner's file) -> between -> running (one
exercise) -> between ... -> done. Each event has its method: a frame on the result pipe, bytes of printed output,
a deadline passed, the process gone. The first failure ends the process; `outcomes` then says, per exercise, what
happened: a result, or why there is none. An exercise with no outcome never started and is tried again by the
caller (grading/worker/batches.py).
"""
from __future__ import annotations

import io
import json
import os
import re
import signal
import tempfile
import time
import zipfile
from typing import Callable

from ..i18n import _
from . import housekeeping, wire
from .launchers import Child
from .limits import (IMPORT_TIMEOUT_S, OUTPUT_LIMIT, PICKLE_LIMIT, RESULT_LIMIT, SETUP_TIMEOUT_S, START_TIMEOUT_S,
                     file_limit)

CRASH_MARK = re.compile(rb"Fatal Python error|Windows fatal exception")  # how faulthandler's report starts
CRASH_BYTES = 4096  # of it kept
STARTING, IMPORT, BETWEEN, RUNNING, DONE = "starting", "import", "between", "running", "done"


def describe_exit(code: int) -> str:
    """A process's return code in words: a POSIX signal (negative), a Windows NTSTATUS crash code, or the exit code."""
    if code < 0:
        sig = -code
        names = {"SIGXCPU": _("the CPU-time limit"), "SIGXFSZ": _("the file-size limit ({mb} MB)",
                                                                  mb=file_limit() >> 20),
                 "SIGKILL": _("killed"), "SIGSEGV": _("a crash in native code"),
                 "SIGABRT": _("an abort, often out of memory")}
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return _("signal {name}: {meaning}", name=name, meaning=names.get(name, _("a signal")))
    ntstatus = {0xC0000005: _("a crash in native code (access violation)"), 0xC00000FD: _("a stack overflow"),
                0xC0000017: _("out of memory"), 0xC0000409: _("an abort in native code")}
    if code & 0xFFFFFFFF in ntstatus:
        hex_code = hex(code & 0xFFFFFFFF)
        return _("exit code {code}: {meaning}", code=hex_code, meaning=ntstatus[code & 0xFFFFFFFF])
    return _("exit code {code}", code=code)


def result_problem(blob: bytes) -> str:
    """Why one exercise's result (a torch.save file) is not sent to the judge, or '': its structure (data.pkl) over
    PICKLE_LIMIT, a compressed entry (torch.save stores), or entries that declare more than RESULT_LIMIT. Read from
    the zip's directory, so the worker, outside the learner's process, bounds even a frame it did not write."""
    try:
        with zipfile.ZipFile(io.BytesIO(blob)) as z:
            entries = z.infolist()
    except (zipfile.BadZipFile, ValueError, OSError):
        return ""  # the judge's torch.load refuses it with a named error
    if any(e.compress_type != zipfile.ZIP_STORED for e in entries) or sum(e.file_size for e in entries) > RESULT_LIMIT:
        return _("Your results are too large to send back (more than {mb} MB); return smaller values.",
                 mb=RESULT_LIMIT >> 20)
    if sum(e.file_size for e in entries if e.filename.endswith("data.pkl")) > PICKLE_LIMIT:
        return _("Your result has too many separate values to send back (more than {mb} MB of structure besides its "
                 "tensors: a long list of numbers?); return a tensor instead.", mb=PICKLE_LIMIT >> 20)
    return ""


class Supervision:
    """The state of one learner process's batch, advanced by one method per event (see the module docstring)."""

    def __init__(self, msg: dict, names: list[str], child: Child, spares: Callable[[], set[int]] = set):
        self.msg, self.names, self.child = msg, names, child
        self.spares = spares  # the pids of processes the stray-killer must leave alone (a waiting spare)
        self.import_s = float(msg.get("import_timeout_s", IMPORT_TIMEOUT_S))
        self.setup_s = float(msg.get("setup_timeout_s", SETUP_TIMEOUT_S))
        self.outcomes: dict[str, dict] = {}
        self.blobs: list[bytes] = []
        self.parser = wire.FrameParser(RESULT_LIMIT)
        self.printed = self.received = 0
        self.tail = b""  # the last bytes printed, until a crash report starts
        self.crash: bytes | None = None  # what faulthandler printed when the process crashed (its Python traceback)
        self.failure: tuple[str, str] | None = None  # (kind, message) that ended the process
        self.code: int | None = None  # its return code once it has ended
        self.current: str | None = None  # the exercise running now
        self.untimed: str | None = None  # the exercise whose result came and whose seconds (TIMES) come next
        self.open_pipes = 2
        if child.starting:
            self._enter(STARTING, START_TIMEOUT_S)
        else:
            self._enter(IMPORT, self.import_s)

    def _enter(self, state: str, seconds: float) -> None:
        self.state, self.deadline = state, time.monotonic() + seconds

    def _fail(self, kind: str, message: str) -> None:
        self.failure = (kind, message)

    @property
    def expected_next(self) -> str | None:
        return self.names[len(self.outcomes)] if len(self.outcomes) < len(self.names) else None

    def run(self) -> None:
        """Take events until the process has sent everything and ended, or failed."""
        while self.open_pipes and self.failure is None:
            timeout = self.deadline - time.monotonic()
            if timeout <= 0:
                self.on_deadline()
                return
            if self.state == DONE:  # wait for the process to exit, not for pipes something it left may hold
                if self.child.keep_alive or self.on_exit_check():
                    return  # (a spare kept for the student's next chapter waits for it instead)
                timeout = min(timeout, 0.02)
            event = self.child.next_event(timeout)
            if event is None:
                continue
            channel, data = event
            if not data:
                self.open_pipes -= 1
            elif channel == "output":
                self.on_output(data)
            else:
                self.on_results(data)

    # events ---------------------------------------------------------------------------------------------------------

    def on_deadline(self) -> None:
        if self.state == STARTING:
            self._fail("timeout", _("The grading process did not start within {seconds:.0f} s (the machine is "
                                    "very busy?).", seconds=START_TIMEOUT_S))
        elif self.state == IMPORT:
            self._fail("timeout", _("Importing your file took more than {seconds:.0f} s (code at module level "
                                    "that never ends?).", seconds=self.import_s))
        elif self.state == RUNNING:
            self._fail("timeout", _("Stopped after {seconds:.0f} s: an endless loop, or something far too "
                                    "slow?", seconds=self.msg['timeouts'][self.current]))
        else:
            self._fail("timeout", _("Stopped: no progress for {seconds:.0f} s between exercises (something "
                                    "patched at import time that hangs?).", seconds=self.setup_s))

    def on_exit_check(self) -> bool:
        self.code = self.child.poll()
        if self.code is not None:
            housekeeping.kill_strays(self.spares())
        return self.code is not None

    def on_output(self, data: bytes) -> None:
        self.printed += len(data)
        if self.crash is None:
            joined = self.tail + data
            found = CRASH_MARK.search(joined)
            if found:
                self.crash, self.tail = joined[found.start():][:CRASH_BYTES], b""
            else:
                self.tail = joined[-32:]  # a mark split between two reads
        elif len(self.crash) < CRASH_BYTES:
            self.crash += data[:CRASH_BYTES - len(self.crash)]
        if self.printed > OUTPUT_LIMIT:
            self._fail("output_limit", _("Your code printed more than {mb} MB; it was stopped. Print less (a "
                                         "loop that prints every step?).", mb=OUTPUT_LIMIT >> 20))

    def on_results(self, data: bytes) -> None:
        self.received += len(data)
        try:
            if self.received > RESULT_LIMIT:
                raise wire.WireError(f"more than {RESULT_LIMIT >> 20} MB of results")
            frames = self.parser.feed(data)
        except wire.WireError:
            self._fail("too_big", _("Your results are too large to send back (more than {mb} MB); return smaller "
                                    "values.", mb=RESULT_LIMIT >> 20))
            return
        for kind, body in frames:
            handler = self.HANDLERS.get((self.state, kind))
            if handler is None or handler(self, body) is False:
                self._fail("protocol", _("The grading channel received something out of order (learner code "
                                         "writing to the judge's pipe?); nothing from this run was trusted."))
            if self.failure:
                return

    def on_ready(self, _body: bytes) -> None:
        self._enter(IMPORT, self.import_s)

    def on_import_error(self, body: bytes) -> None:
        self._fail("import_error", body.decode("utf-8", "replace"))

    def on_imported(self, _body: bytes) -> None:
        self._enter(BETWEEN, self.setup_s)

    def on_started(self, body: bytes) -> bool:
        name = body.decode(errors="replace")
        if name != self.expected_next:
            return False
        self.current = name
        self._enter(RUNNING, self.msg["timeouts"][name])
        return True

    def on_result(self, body: bytes) -> None:
        problem = result_problem(body)
        if problem:
            self._fail("too_big", problem)
            return
        self.outcomes[self.current] = {"kind": "result"}
        self.blobs.append(body)
        self.untimed, self.current = self.current, None
        self._enter(BETWEEN, self.setup_s)

    def on_times(self, body: bytes) -> bool:
        """The seconds of each case of the result just received: the process's word, shown and nothing more (a list
        that is not one number per case is dropped)."""
        if self.untimed is None:
            return False
        try:
            seconds = json.loads(body)
        except ValueError:
            seconds = None
        cases = next((len(e["cases"]) for e in self.msg["exercises"] if e["name"] == self.untimed), None)
        if (isinstance(seconds, list) and len(seconds) == cases
                and all(type(x) in (int, float) and 0 <= x < 1e6 for x in seconds)):
            self.outcomes[self.untimed]["seconds"] = [float(x) for x in seconds]
        self.untimed = None
        return True

    def on_done(self, _body: bytes) -> bool:
        if self.expected_next is not None:
            return False
        self._enter(DONE, self.setup_s)
        return True

    HANDLERS = {(STARTING, wire.READY): on_ready, (IMPORT, wire.IMPORT_ERROR): on_import_error,
                (IMPORT, wire.IMPORTED): on_imported, (BETWEEN, wire.STARTED): on_started,
                (RUNNING, wire.RESULT): on_result, (BETWEEN, wire.TIMES): on_times, (BETWEEN, wire.DONE): on_done}

    # the end --------------------------------------------------------------------------------------------------------

    @property
    def reusable(self) -> bool:
        """Whether the process finished its batch cleanly and still runs (a kept spare waiting for its next job)."""
        return self.state == DONE and not self.failure and self.code is None and self.child.poll() is None

    def end(self) -> int:
        """Stop the process (and what it left in its session); its return code. A kept spare that finished
        cleanly is left running for the launcher (0)."""
        if self.child.keep_alive and self.reusable:
            return 0
        if self.failure:
            self.child.kill()
        status = self.code if self.code is not None else self.child.wait()
        self.child.kill()
        return status

    def crash_line(self) -> int:
        """The line of the learner's file that the process was running when it crashed (the innermost one in the
        Python traceback that faulthandler printed), or 0: the process's word, used only to word a failure."""
        text = (self.crash or b"").decode("utf-8", "replace")
        for path, line in re.findall(r'File "([^"]+)", line (\d+)', text):
            if os.path.basename(path) == self.msg.get("filename"):
                return int(line)
        return 0

    def verdicts(self, status: int) -> tuple[dict[str, dict], list[bytes]]:
        """(outcomes by name, result blobs in outcome order) once the process has ended with `status`."""
        at_import = self.state in (STARTING, IMPORT)
        outcomes, blobs = dict(self.outcomes), list(self.blobs)
        if self.failure and self.failure[0] == "protocol":  # a forged frame may have come at any time: trust none
            return {n: {"kind": "protocol", "message": self.failure[1], "at_import": at_import}
                    for n in self.names}, []
        if self.failure:
            kind, message = self.failure
            targets = self.names if at_import else [self.current or self.expected_next]
            for n in targets:
                if n and n not in outcomes:
                    outcomes[n] = {"kind": kind, "message": message, "at_import": at_import}
        elif at_import:
            died = _("The grading process ended while importing your file ({how}): sys.exit/os._exit at module "
                     "level, a crash, or the memory limit.", how=describe_exit(status))
            outcomes = {n: {"kind": "died", "at_import": True, "message": died} for n in self.names}
        elif self.state == RUNNING:
            outcomes[self.current] = {"kind": "died", "status": status, "line": self.crash_line(), "message": _(
                "The grading process ended while running your code ({how}): sys.exit/os._exit, a crash, or the "
                "memory limit.", how=describe_exit(status))}
        return outcomes, blobs


def supervise(launcher, msg: dict, source: bytes, exercises: list[dict], inputs: dict,
              root: str) -> tuple[dict[str, dict], list[bytes]]:
    """Run `exercises` (in order) in one learner process from `launcher`; (outcomes by name, result blobs in order).

    An exercise with no outcome was never started (the process died before it) and should be tried again."""
    scratch = launcher.kept_scratch(msg) or tempfile.mkdtemp(prefix="scratch-", dir=root)
    learner_file = os.path.join(scratch, msg["filename"])
    with open(learner_file, "wb") as f:
        f.write(source)
    housekeeping.kill_strays(launcher.pids())
    child = launcher.start(msg, exercises, inputs, scratch, learner_file)
    watch = Supervision(msg, [e["name"] for e in exercises], child, launcher.pids)
    watch.run()
    status = watch.end()
    reused_but_lost = child.reused and watch.state == STARTING
    launcher.release(child, watch.reusable)
    housekeeping.kill_strays(launcher.pids())  # anything that left the session (setsid from native code)
    try:  # only now: nothing the learner process left can still write to its inputs
        observed = {"changed": launcher.observe(child)}
    except Exception as exc:  # the zygote is gone or failed: the inputs were not watched, nothing is passed on it
        observed = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    housekeeping.clean_tmp(root, keep=launcher.kept_scratch(msg))
    if reused_but_lost:  # the kept spare never took this job (an earlier chapter broke it): a fresh one does
        return supervise(launcher, dict(msg, owner=None), source, exercises, inputs, root)
    outcomes, blobs = watch.verdicts(status)
    return with_observed(outcomes, observed), blobs


def with_observed(outcomes: dict[str, dict], observed: dict) -> dict[str, dict]:
    """Each result's outcome with what was watched of its inputs from outside the learner process ("watched":
    {"changed": case -> paths} or {"error": why not}); no "watched" where no process outside watched them."""
    changed = observed.get("changed")
    if changed is None and "error" not in observed:
        return outcomes
    return {name: dict(o, watched={"error": observed["error"]} if changed is None else
                       {"changed": changed.get(name, {})}) if o.get("kind") == "result" else o
            for name, o in outcomes.items()}
