// Shared by every course figure; `root` is the figure's <div class="course-figure">.
if (!root || root.getAttribute("data-ready")) return;
root.setAttribute("data-ready", "1");
var data = JSON.parse(root.querySelector("script.cf-data").textContent);
var mode = root.getAttribute("data-lang");
var pageLang = ((root.closest("[lang]") || document.documentElement).getAttribute("lang") || "en").toLowerCase();
var lang = mode !== "auto" ? mode : (pageLang.indexOf("zh") === 0 ? "zh" : "en");
var words = data.text[lang];
function say(key, values) {  // a label in the figure's language, with {name} filled in from `values`
  return words[key].replace(/\{(\w+)\}/g, function (m, name) { return values && name in values ? values[name] : m; });
}
root.querySelectorAll("[data-t]").forEach(function (el) { el.textContent = words[el.getAttribute("data-t")]; });
root.querySelectorAll("[data-t-label]").forEach(function (el) {
  el.setAttribute("aria-label", words[el.getAttribute("data-t-label")]);
});
root.querySelector(".cf-note").hidden = true;
function el(tag, cls, text) {
  var node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}
