// openAssistant() opens the gateway's pop-out assistant as the window "assistant-popout",
// 500×730, docked to the bottom right of this window; calling it again, even after this page
// reloads, refocuses that window as it is.
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

  // blank reports whether win is a window just opened, still at about:blank. One showing the
  // assistant of another origin cannot be read, and is not blank.
  function blank(win) {
    try {
      return win.location.href === 'about:blank';
    } catch (e) {
      return false;
    }
  }
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
    // After this page reloads it has no reference to a pop-out it opened before, and
    // window.open(url, name) would navigate that window, losing the text typed into it. With
    // no address, window.open finds the window by name without navigating it, or opens a blank
    // one; only the blank one is sent to the assistant.
    popup = w.open('', 'assistant-popout', features);
    if (!popup) return null;
    if (blank(popup)) popup.location.replace(url);
    popup.focus();
    return popup;
  };
})(window);
