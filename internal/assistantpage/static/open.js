// openAssistant() opens the gateway's pop-out assistant as the window "assistant-popout",
// 500×730, docked to the bottom right of this window; calling it again refocuses that window.
// openAssistant({authorization: 'Bearer ...'}) hands the pop-out the caller's credentials
// through session storage, which the browser clones into the window it opens (never through
// its address).
(function (w) {
  'use strict';
  var script = document.currentScript;
  var url = new URL('/assistant', (script && script.src) || w.location.href).href;
  var WIDTH = 500;
  var HEIGHT = 730;
  var popup = null;
  w.openAssistant = function (options) {
    if (popup && !popup.closed) {
      popup.focus();
      return popup;
    }
    if (options && options.authorization) {
      w.sessionStorage.setItem('assistant-authorization', options.authorization);
    }
    // Not clamped to zero: on a screen left of or above the primary one, coordinates are negative.
    var left = w.screenX + w.outerWidth - WIDTH;
    var top = w.screenY + w.outerHeight - HEIGHT;
    var features = 'popup=yes,width=' + WIDTH + ',height=' + HEIGHT + ',left=' + left + ',top=' + top +
      ',menubar=no,toolbar=no,location=no,status=no';
    popup = w.open(url, 'assistant-popout', features);
    if (popup) popup.focus();
    return popup;
  };
})(window);
