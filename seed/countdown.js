// Counts down to the end of the offer shown on the page.
(function () {
  var target = Date.now() + 15 * 60 * 1000;
  var el = document.getElementById('countdown');
  if (!el) return;
  setInterval(function () {
    var left = Math.max(0, target - Date.now());
    var m = Math.floor(left / 60000), s = Math.floor((left % 60000) / 1000);
    el.textContent = m + ':' + (s < 10 ? '0' : '') + s;
  }, 1000);
})();
