// A 3-D scatter of words on a 2-D canvas: drag (pointer events) or arrow keys rotate; buttons switch the view.
var COLOURS = ["#1f5fa8", "#c24f00", "#2a7d2a", "#b8232a", "#6b4aa0", "#7a5230", "#b0338a", "#555555"];
var canvas = root.querySelector("canvas");
var ctx = canvas.getContext("2d");
var view = "pca", yaw = -0.9, pitch = 0.35;
var legend = root.querySelector(".cf-legend");
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
function draw() {
  var w = canvas.width, h = canvas.height, s = Math.min(w, h) * 0.42, cx = w / 2, cy = h / 2;
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
  var pts = v.xyz.map(function (p, i) { var q = project(p); return {x: q[0], y: q[1], z: q[2], i: i}; });
  pts.sort(function (a, b) { return a.z - b.z; });  // far first, so near points are drawn on top
  pts.forEach(function (p) {
    var colour = COLOURS[data.group[p.i] % COLOURS.length], r = 3.5 + 1.2 * (p.z + 1);
    ctx.fillStyle = colour;
    ctx.beginPath();
    ctx.arc(cx + s * p.x, cy - s * p.y, r, 0, 2 * Math.PI);
    ctx.fill();
    ctx.fillText(data.words[p.i], cx + s * p.x + r + 2, cy - s * p.y + 4);
  });
}
function rotate(dyaw, dpitch) {
  yaw += dyaw;
  pitch = Math.max(-1.5, Math.min(1.5, pitch + dpitch));
  draw();
}
var last = null;
canvas.addEventListener("pointerdown", function (e) {
  last = [e.clientX, e.clientY];
  canvas.setPointerCapture(e.pointerId);
});
canvas.addEventListener("pointermove", function (e) {
  if (!last) return;
  rotate((e.clientX - last[0]) * 0.01, (e.clientY - last[1]) * 0.01);
  last = [e.clientX, e.clientY];
});
["pointerup", "pointercancel"].forEach(function (t) { canvas.addEventListener(t, function () { last = null; }); });
canvas.addEventListener("keydown", function (e) {
  var step = {ArrowLeft: [-0.1, 0], ArrowRight: [0.1, 0], ArrowUp: [0, -0.1], ArrowDown: [0, 0.1]}[e.key];
  if (!step) return;
  e.preventDefault();
  rotate(step[0], step[1]);
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
  yaw = -0.9; pitch = 0.35; draw();
});
draw();
