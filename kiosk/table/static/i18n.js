// The one string catalogue of the screens (static/i18n.json, inlined by the server as
// window.GD_I18N: {key: {zh, en}}). Chinese is the default; ?lang=en|zh or the page's switch
// (kept in localStorage) changes it. A key without a text in the language in use is shown as
// the key itself and listed on <html data-i18n-missing="..."> (the tests look for it).
(function (g) {
  "use strict";
  var CAT = g.GD_I18N || {};
  var q = new URLSearchParams(g.location ? g.location.search : "").get("lang");
  if (q === "en" || q === "zh") { try { localStorage.setItem("gd-lang", q); } catch (e) { /* private mode */ } }
  var stored = null;
  try { stored = localStorage.getItem("gd-lang"); } catch (e) { stored = null; }
  var lang = q === "en" || q === "zh" ? q : (stored === "en" ? "en" : "zh");
  var missing = {};
  function miss(key) {
    if (missing[key]) return;
    missing[key] = true;
    document.documentElement.setAttribute("data-i18n-missing", Object.keys(missing).join(" "));
  }
  function fill(text, params) {
    return text.replace(/\{(\w+)(!r)?\}/g, function (_m, k, r) {
      var v = params && params[k] != null ? String(params[k]) : "";
      return r ? "'" + v + "'" : v;
    });
  }
  // tr("ui.cardsLeft", {n: 5}) -> "5 张"
  function tr(key, params, lg) {
    var e = CAT[key], l = lg || lang;
    if (!e || typeof e[l] !== "string" || e[l] === "") { miss(key); return key; }
    return fill(e[l], params);
  }
  function has(key) { return !!CAT[key]; }
  // every element with data-i18n="key" (text) or data-i18n-placeholder="key"
  function apply(root) {
    document.documentElement.lang = lang;
    (root || document).querySelectorAll("[data-i18n]").forEach(function (el) { el.textContent = tr(el.getAttribute("data-i18n")); });
    (root || document).querySelectorAll("[data-i18n-placeholder]").forEach(function (el) { el.placeholder = tr(el.getAttribute("data-i18n-placeholder")); });
  }
  function setLang(l) {
    lang = l === "en" ? "en" : "zh";
    try { localStorage.setItem("gd-lang", lang); } catch (e) { /* private mode */ }
    apply();
  }
  // a server error answer {detail, detail_zh, code} in the language in use
  function error(body, status) {
    if (body && body.code && has(body.code)) return lang === "zh" ? (body.detail_zh || body.detail) : body.detail;
    if (body && typeof body.detail === "string") return lang === "zh" && body.detail_zh ? body.detail_zh : body.detail;
    return tr("err.bad_request", { detail: "HTTP " + status });
  }
  g.GDI18N = { tr: tr, has: has, apply: apply, setLang: setLang, error: error, lang: function () { return lang; } };
})(window);
