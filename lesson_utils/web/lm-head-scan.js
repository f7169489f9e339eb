// logits = h W^T, animated: each step lights one row of W, multiplies it with h and fills that token's logit bar.
var grid = root.querySelector(".cf-scan"), D = data.dims.length, n = data.tokens.length;
grid.style.gridTemplateColumns = "max-content repeat(" + D + ", minmax(var(--cf-cell-min), 1fr)) " +
  "minmax(var(--cf-logit-min), 3fr) max-content";  // the minimums shrink on a narrow figure (figures.css)
grid.tabIndex = 0;  // where it still scrolls sideways, the keyboard can scroll it too
function colour(x, scale) {  // white at 0, red for positive, blue for negative
  var t = Math.max(-1, Math.min(1, x / scale)), a = Math.abs(t);
  var c = t > 0 ? [184, 35, 42] : [31, 95, 168];
  return "rgb(" + c.map(function (v) { return Math.round(255 + (v - 255) * a); }).join(",") + ")";
}
function cell(x, scale) {
  var c = el("div", "cf-cell");
  c.style.background = colour(x, scale);
  return c;
}
grid.appendChild(el("div", "cf-row-label", words.h));
data.h.forEach(function (x) { grid.appendChild(cell(x, data.hscale)); });
grid.appendChild(el("div", "cf-row-label", words.logit));
grid.appendChild(el("div"));
var big = Math.max.apply(null, data.logits.map(Math.abs)), rows = [];
data.tokens.forEach(function (label, r) {
  var cells = [el("div", "cf-row-label", label)];
  data.W[r].forEach(function (x) { cells.push(cell(x, data.wscale)); });
  var bar = el("div", "cf-logit"), fill = el("div", "cf-bar-fill"), value = el("div", "cf-logit-value");
  bar.appendChild(el("div", "cf-zero"));
  bar.appendChild(fill);
  bar.setAttribute("data-token", label);
  fill.style.width = "0%";
  fill.style.left = "50%";
  cells.push(bar, value);
  cells.forEach(function (c) { grid.appendChild(c); });
  rows.push({cells: cells, bar: bar, fill: fill, value: value});
});
var done = 0, timer = null;
var readout = root.querySelector(".cf-readout"), play = root.querySelector('button[data-action="play"]');
function show() {
  rows.forEach(function (row, r) {
    var active = r === done - 1, logit = data.logits[r], w = 50 * Math.abs(logit) / big;
    row.cells.slice(0, D + 1).forEach(function (c) { c.classList.toggle("cf-active", active); });
    row.bar.classList.toggle("cf-beam", active);
    row.fill.style.width = r < done ? w.toFixed(2) + "%" : "0%";
    row.fill.style.left = (logit < 0 && r < done ? 50 - w : 50).toFixed(2) + "%";
    row.value.textContent = r < done ? logit.toFixed(2) : "";
  });
  root.setAttribute("data-step", String(done));
  readout.textContent = done === 0 ? words.start : say("status", {i: done, token: data.tokens[done - 1],
    logit: data.logits[done - 1].toFixed(2), part: data.part[done - 1].toFixed(2)});
}
function step() { done = done >= n ? 1 : done + 1; show(); }
function stop() {
  if (timer) clearInterval(timer);
  timer = null;
  play.setAttribute("aria-pressed", "false");
  play.textContent = words.play;
}
play.addEventListener("click", function () {
  if (timer) { stop(); return; }
  if (done >= n) done = 0;
  step();
  timer = setInterval(function () { if (done >= n) stop(); else step(); }, 700);
  play.setAttribute("aria-pressed", "true");
  play.textContent = words.pause;
});
root.querySelector('button[data-action="step"]').addEventListener("click", function () { stop(); step(); });
root.querySelector('button[data-action="reset"]').addEventListener("click", function () { stop(); done = 0; show(); });
show();
