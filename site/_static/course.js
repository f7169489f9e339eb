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
