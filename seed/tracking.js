// Sends a page view with the utm parameters of the visit.
(function () {
  var params = new URLSearchParams(location.search);
  navigator.sendBeacon && navigator.sendBeacon('/collect', JSON.stringify({ page: location.pathname, utm_source: params.get('utm_source') }));
})();
