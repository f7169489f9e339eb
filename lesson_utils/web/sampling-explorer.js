// Temperature, top-k, top-p and min-p on a real next-token distribution, in generate's order (transformers).
// Entries: the exact tokens (count 1) and the tail's logit bins (count n); keep[i] = how many of entry i are kept.
var entries = data.tokens.map(function (t) { return {logit: t[1], count: 1}; })
  .concat(data.tail.map(function (b) { return {logit: b[0], count: b[1]}; }));
var inputs = {};
root.querySelectorAll('input[type="range"]').forEach(function (input) { inputs[input.name] = input; });
(function () {  // top-k also takes a typed number: on a slider 0-200 one pixel is more than one k
  var slider = inputs.top_k, box = el("input", "cf-number");
  if (!slider) return;
  box.type = "number"; box.min = slider.min; box.max = slider.max; box.step = "1"; box.value = slider.value;
  box.setAttribute("aria-label", words.top_k);
  slider.nextElementSibling.hidden = true;  // the box shows the value instead of the <output>
  slider.parentNode.appendChild(box);
  box.addEventListener("input", function () {
    if (box.value === "" || isNaN(box.valueAsNumber)) return;
    slider.value = String(Math.max(0, Math.min(Number(slider.max), Math.round(box.valueAsNumber))));
    update();
  });
  slider.addEventListener("input", function () { box.value = slider.value; });
  root.courseTopK = box;
})();
function weights(z, keep) {  // exp(z - max) over the kept entries, and their sum
  var m = -Infinity, i, sum = 0, w = [];
  for (i = 0; i < z.length; i++) if (keep[i] > 0 && z[i] > m) m = z[i];
  for (i = 0; i < z.length; i++) { w.push(keep[i] > 0 ? Math.exp(z[i] - m) : 0); sum += keep[i] * w[i]; }
  return {w: w, sum: sum};
}
function filtered(T, k, p, minP) {
  var z = entries.map(function (e) { return e.logit / T; });
  var keep = entries.map(function (e) { return e.count; });
  var i, cw;
  if (k > 0) {  // TopKLogitsWarper: keep every logit >= the k-th largest (ties with it stay)
    var seen = 0, kth = -Infinity;
    for (i = 0; i < z.length && seen < k; i++) { seen += keep[i]; kth = z[i]; }
    for (i = 0; i < z.length; i++) if (z[i] < kth) keep[i] = 0;
  }
  if (p < 1) {  // TopPLogitsWarper: a token stays while the mass above it is below p (the crossing one stays)
    cw = weights(z, keep);
    var above = 0;
    for (i = 0; i < z.length; i++) {
      if (keep[i] === 0) continue;
      var q = cw.w[i] / cw.sum, n = keep[i], kept = 0;
      while (kept < n && above + kept * q < p) kept++;
      if (i === 0 && kept === 0) kept = 1;  // the most likely token always stays
      above += n * q;
      keep[i] = kept;
    }
  }
  if (minP > 0) {  // MinPLogitsWarper: keep probabilities >= min_p x the top probability
    cw = weights(z, keep);
    var top = 0;
    for (i = 0; i < z.length; i++) if (keep[i] > 0) top = Math.max(top, cw.w[i] / cw.sum);
    for (i = 0; i < z.length; i++) if (keep[i] > 0 && cw.w[i] / cw.sum < minP * top) keep[i] = 0;
  }
  var before = weights(z, entries.map(function (e) { return e.count; }));
  cw = weights(z, keep);
  var probs = [], kept = 0, mass = 0, entropy = 0;
  for (i = 0; i < z.length; i++) {
    var pi = keep[i] > 0 ? cw.w[i] / cw.sum : 0;
    probs.push(pi);
    kept += keep[i];
    mass += keep[i] * before.w[i] / before.sum;
    if (pi > 0) entropy -= keep[i] * pi * Math.log(pi);
  }
  return {probs: probs, kept: kept, mass: mass, entropy: entropy};
}
function percent(x) { return x >= 0.1 ? (100 * x).toFixed(1) + "%" : x >= 0.001 ? (100 * x).toFixed(2) + "%" : x > 0 ? (100 * x).toExponential(1) + "%" : "0%"; }
var bars = root.querySelector(".cf-bars"), rows = [];
for (var b = 0; b < data.shown; b++) {
  var label = el("span", "cf-bar-label", data.tokens[b][0]);
  var track = el("span", "cf-bar-track"), fill = el("span", "cf-bar-fill"), value = el("span", "cf-bar-value");
  fill.style.display = "block";
  track.appendChild(fill);
  fill.setAttribute("data-bar", data.tokens[b][0]);
  bars.appendChild(label); bars.appendChild(track); bars.appendChild(value);
  rows.push({track: track, fill: fill, value: value, label: label});
}
function update() {
  var s = {};
  Object.keys(inputs).forEach(function (name) {
    s[name] = parseFloat(inputs[name].value);
    inputs[name].nextElementSibling.textContent = inputs[name].value;
  });
  var r = filtered(s.temperature, Math.round(s.top_k), s.top_p, s.min_p);
  var top = Math.max.apply(null, r.probs.slice(0, data.shown)), scale = 0.01;
  [0.02, 0.05, 0.1, 0.2, 0.5, 1].forEach(function (c) { if (scale < top) scale = c; });
  var shownMass = 0;
  rows.forEach(function (row, i) {
    var pi = r.probs[i];
    shownMass += pi;
    row.fill.style.width = (100 * pi / scale).toFixed(3) + "%";
    row.fill.setAttribute("data-p", String(pi));
    row.value.textContent = pi > 0 ? percent(pi) : words.removed;
    row.value.className = "cf-bar-value" + (pi > 0 ? "" : " cf-removed");
    row.label.className = "cf-bar-label" + (pi > 0 ? "" : " cf-removed");
  });
  var readout = root.querySelector(".cf-readout");
  readout.textContent = say("readout", {kept: r.kept.toLocaleString("en"), V: data.V.toLocaleString("en"),
    mass: percent(r.mass), shown: data.shown, shownmass: percent(shownMass), entropy: r.entropy.toFixed(2)});
  readout.setAttribute("data-kept", String(r.kept));
}
Object.keys(inputs).forEach(function (name) { inputs[name].addEventListener("input", update); });
root.querySelector('button[data-action="reset"]').addEventListener("click", function () {
  Object.keys(inputs).forEach(function (name) { inputs[name].value = data.defaults[name]; });
  if (root.courseTopK) root.courseTopK.value = inputs.top_k.value;
  update();
});
update();
