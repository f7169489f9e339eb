// A 3-D scatter of words on a 2-D canvas: drag (pointer events) or arrow keys rotate; the wheel, a pinch or the
// +/- keys zoom; buttons switch the view. Labels never overprint: the hovered word and the clicked (selected) ones
// come first, then, nearest first, every other word whose label fits where no label is yet.
var COLOURS = ["#1f5fa8", "#c24f00", "#2a7d2a", "#b8232a", "#6b4aa0", "#7a5230", "#b0338a", "#555555"];
var canvas = root.querySelector("canvas");
var ctx = canvas.getContext("2d");
var view = "pca", yaw = -0.9, pitch = 0.35, zoom = 1, hovered = -1, selected = {}, shown = [];
var legend = root.querySelector(".cf-legend"), hint = root.querySelector('[data-t="hint"]');
if (hint) hint.textContent += {
  en: " The wheel, a pinch or the + and - keys zoom; point at a word or click it to see its label.",
  zh: "滚轮、双指捏合或 + 和 - 键缩放；指向或点击一个点即可看到它的词。"}[lang];
data.groups.forEach(function (g, i) {
  var item = el("li"), dot = el("span");
  dot.style.background = COLOURS[i % COLOURS.length];
  item.appendChild(dot);
  item.appendChild(document.createTextNode(g));
  legend.appendChild(item);
});
function project(p) {  // rotate about the vertical axis (yaw), then tilt (pitch); returns [x, y, depth]
  var cy = Math.cos(yaw), sy = Math.sin(yaw), cp = Math.cos(pitch), sp = Math.sin(pitch);
  var x = cy * p[0] + sy * p[1], z = -sy * p[0] + cy * p[1], y = p[2];
  return [x, cp * y - sp * z, sp * y + cp * z];
}
function screen() {  // every word's position on the canvas (canvas pixels), its depth and dot radius
  var w = canvas.width, h = canvas.height, s = Math.min(w, h) * 0.42 * zoom;
  return data.views[view].xyz.map(function (p, i) {
    var q = project(p);
    return {x: w / 2 + s * q[0], y: h / 2 - s * q[1], z: q[2], r: 3.5 + 1.2 * (q[2] + 1), i: i};
  });
}
function overlaps(a, b) { return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h; }
function draw() {
  var w = canvas.width, h = canvas.height, s = Math.min(w, h) * 0.42 * zoom, cx = w / 2, cy = h / 2;
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.fillStyle = "#ffffff";
  ctx.fillRect(0, 0, w, h);
  var v = data.views[view];
  ctx.lineWidth = 1;
  ctx.font = "13px system-ui, sans-serif";
  [[1, 0, 0], [0, 1, 0], [0, 0, 1]].forEach(function (axis, i) {  // the three directions, as arrows from the centre
    var a = project(axis.map(function (c) { return -c; })), b = project(axis);
    ctx.strokeStyle = "#8a8a8a";
    ctx.beginPath();
    ctx.moveTo(cx + s * a[0], cy - s * a[1]);
    ctx.lineTo(cx + s * b[0], cy - s * b[1]);
    ctx.stroke();
    ctx.fillStyle = "#333333";
    ctx.fillText(v.axes[i], cx + s * b[0] + 4, cy - s * b[1]);
  });
  var pts = screen();
  pts.slice().sort(function (a, b) { return a.z - b.z; }).forEach(function (p) {  // far first: near ones on top
    ctx.fillStyle = COLOURS[data.group[p.i] % COLOURS.length];
    ctx.beginPath();
    ctx.arc(p.x, p.y, p.r, 0, 2 * Math.PI);
    ctx.fill();
    if (p.i === hovered || selected[p.i]) {
      ctx.strokeStyle = "#1a1a1a";
      ctx.lineWidth = 2;
      ctx.stroke();
      ctx.lineWidth = 1;
    }
  });
  var order = pts.slice().sort(function (a, b) {  // hovered, then selected, then nearest first
    var ka = a.i === hovered ? 2 : selected[a.i] ? 1 : 0, kb = b.i === hovered ? 2 : selected[b.i] ? 1 : 0;
    return kb - ka || b.z - a.z;
  });
  var boxes = [];
  shown = [];
  order.forEach(function (p) {
    var word = data.words[p.i], tw = ctx.measureText(word).width;
    var box = {x: p.x + p.r + 2, y: p.y - 9, w: tw + 2, h: 15, i: p.i};
    var must = p.i === hovered || selected[p.i];
    if (box.x + box.w > w) box.x = p.x - p.r - 4 - tw;  // at the right edge: the label goes to the left
    if (!must && (box.x < 0 || box.y < 0 || box.y + box.h > h)) return;
    if (boxes.some(function (b) { return overlaps(box, b); })) {
      if (!must) return;
      boxes = boxes.filter(function (b) { return !overlaps(box, b); });  // a chosen word's label wins the place
    }
    boxes.push(box);
  });
  boxes.forEach(function (b) {
    var strong = b.i === hovered || selected[b.i];
    ctx.fillStyle = strong ? "rgba(255,255,255,0.9)" : "rgba(255,255,255,0.6)";
    ctx.fillRect(b.x - 1, b.y, b.w, b.h);
    ctx.fillStyle = strong ? "#000000" : "#1a1a1a";
    ctx.font = (strong ? "bold " : "") + "13px system-ui, sans-serif";
    ctx.fillText(data.words[b.i], b.x, b.y + 11);
    shown.push({word: data.words[b.i], x: b.x, y: b.y, w: b.w, h: b.h});
  });
  root.setAttribute("data-zoom", zoom.toFixed(2));
  root.setAttribute("data-labels", String(shown.length));
}
root.courseLabels = function () { return shown; };  // for tests: the labels written on the canvas now,
root.coursePoints = function () { return screen(); };  // and where each word's dot is (canvas pixels)
function rotate(dyaw, dpitch) {
  yaw += dyaw;
  pitch = Math.max(-1.5, Math.min(1.5, pitch + dpitch));
  draw();
}
function setZoom(z) {
  zoom = Math.max(0.5, Math.min(8, z));
  draw();
}
function at(e) {  // a pointer event's position in canvas pixels
  var rect = canvas.getBoundingClientRect();
  return [(e.clientX - rect.left) * canvas.width / rect.width, (e.clientY - rect.top) * canvas.height / rect.height];
}
function nearest(xy) {  // the word whose dot is nearest to xy, within 12 canvas pixels, or -1
  var best = -1, bestD = 144;
  screen().forEach(function (p) {
    var d = (p.x - xy[0]) * (p.x - xy[0]) + (p.y - xy[1]) * (p.y - xy[1]);
    if (d < bestD) { best = p.i; bestD = d; }
  });
  return best;
}
var pointers = {}, last = null, moved = 0, pinch = null;
function spread() {
  var p = Object.keys(pointers).map(function (k) { return pointers[k]; });
  return Math.hypot(p[0][0] - p[1][0], p[0][1] - p[1][1]);
}
canvas.addEventListener("pointerdown", function (e) {
  pointers[e.pointerId] = [e.clientX, e.clientY];
  canvas.setPointerCapture(e.pointerId);
  if (Object.keys(pointers).length === 2) { pinch = {d: spread(), zoom: zoom}; last = null; return; }
  last = [e.clientX, e.clientY];
  moved = 0;
});
canvas.addEventListener("pointermove", function (e) {
  if (pointers[e.pointerId]) pointers[e.pointerId] = [e.clientX, e.clientY];
  if (pinch && Object.keys(pointers).length === 2) { setZoom(pinch.zoom * spread() / Math.max(pinch.d, 1)); return; }
  if (!last) {
    var h = nearest(at(e));
    if (h !== hovered) { hovered = h; draw(); }
    return;
  }
  moved += Math.abs(e.clientX - last[0]) + Math.abs(e.clientY - last[1]);
  rotate((e.clientX - last[0]) * 0.01, (e.clientY - last[1]) * 0.01);
  last = [e.clientX, e.clientY];
});
function release(e) {
  delete pointers[e.pointerId];
  if (Object.keys(pointers).length < 2) pinch = null;
  if (last && moved < 4 && e.type === "pointerup") {  // a click, not a drag: select or unselect the nearest word
    var i = nearest(at(e));
    if (i >= 0) { if (selected[i]) delete selected[i]; else selected[i] = true; draw(); }
  }
  last = null;
}
canvas.addEventListener("pointerup", release);
canvas.addEventListener("pointercancel", release);
canvas.addEventListener("pointerleave", function () { if (!last && hovered >= 0) { hovered = -1; draw(); } });
canvas.addEventListener("wheel", function (e) {  // the wheel, or a trackpad pinch (ctrl+wheel), zooms
  e.preventDefault();
  setZoom(zoom * Math.exp(-e.deltaY * (e.ctrlKey ? 0.01 : 0.002)));
}, {passive: false});
canvas.addEventListener("keydown", function (e) {
  var step = {ArrowLeft: [-0.1, 0], ArrowRight: [0.1, 0], ArrowUp: [0, -0.1], ArrowDown: [0, 0.1]}[e.key];
  var factor = {"+": 1.25, "=": 1.25, "-": 0.8, "_": 0.8}[e.key];
  if (!step && !factor) return;
  e.preventDefault();
  if (step) rotate(step[0], step[1]);
  else setZoom(zoom * factor);
});
root.querySelectorAll("button[data-view]").forEach(function (b) {
  b.addEventListener("click", function () {
    view = b.getAttribute("data-view");
    root.querySelectorAll("button[data-view]").forEach(function (o) {
      o.setAttribute("aria-pressed", String(o === b));
    });
    draw();
  });
});
root.querySelector('button[data-action="reset"]').addEventListener("click", function () {
  yaw = -0.9; pitch = 0.35; zoom = 1; selected = {}; draw();
});
draw();
