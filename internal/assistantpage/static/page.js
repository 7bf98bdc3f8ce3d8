// The pop-out assistant: drives the chat SDK (Assistant, queued by queue.js until the SDK
// loads). Session tokens come from the gateway's createAssistantSession mutation, with the
// opener's credentials when it handed any over in session storage; they go to the SDK only
// and are never written anywhere else.
(function () {
  'use strict';
  var MUTATION = 'mutation { createAssistantSession { token expiresAt } }';
  var IDENTIFY_WITHIN = 15000; // the spec's window for identify after session_expired
  var notices = document.getElementById('assistant-notices');
  var events = [];
  var fetching = null;

  // note records what happened, for people and tests reading the page: the event names only.
  function note(name) {
    events.push(name);
    document.documentElement.setAttribute('data-assistant-events', events.join(' '));
  }

  function show(level, text) {
    var p = document.createElement('p');
    p.className = level;
    p.textContent = text;
    notices.appendChild(p);
    while (notices.childNodes.length > 3) notices.removeChild(notices.firstChild);
    setTimeout(function () { if (p.parentNode) p.parentNode.removeChild(p); }, 8000);
  }

  function fetchToken() {
    var headers = { 'Content-Type': 'application/json' };
    var auth = window.sessionStorage.getItem('assistant-authorization');
    if (auth) headers.Authorization = auth;
    return fetch('/graphql', {
      method: 'POST',
      credentials: 'same-origin',
      headers: headers,
      body: JSON.stringify({ query: MUTATION }),
    }).then(function (r) {
      return r.json().then(function (body) {
        var s = body && body.data && body.data.createAssistantSession;
        if (!s || !s.token) {
          var e = body && body.errors && body.errors[0];
          throw new Error(e ? e.message : 'no session token (' + r.status + ')');
        }
        return s.token;
      });
    });
  }

  // identify gets a token and hands it to the SDK, trying again with growing pauses until the
  // spec's 15 seconds are spent; one attempt at a time.
  function identify() {
    if (fetching) return fetching;
    var deadline = Date.now() + IDENTIFY_WITHIN;
    var pause = 500;
    function attempt() {
      return fetchToken().catch(function (err) {
        var wait = Math.min(pause, deadline - Date.now());
        if (wait <= 0) throw err;
        pause *= 2;
        return new Promise(function (resolve) { setTimeout(resolve, wait); }).then(attempt);
      });
    }
    fetching = attempt().then(function (token) {
      Assistant('identify', { token: token });
      note('identify');
    }, function (err) {
      show('error', 'Could not start an assistant session: ' + err.message);
    }).then(function () { fetching = null; });
    return fetching;
  }

  Assistant('on', 'ready', function () {
    note('ready');
    document.getElementById('assistant-waiting').hidden = true;
  });
  Assistant('on', 'session_expired', function () {
    note('session_expired');
    identify();
  });
  Assistant('on', 'resizerequest', function (r) {
    note('resizerequest');
    window.resizeBy(r.widthDelta, 0);
  });
  Assistant('on', 'notification', function (n) {
    note('notification');
    show(n.level || 'info', [n.title, n.body].filter(Boolean).join(': '));
  });
  Assistant('on', 'error', function (e) {
    note('error');
    show('error', e.message);
  });
  Assistant('init', { container: 'assistant-chat', title: document.title });
  identify();
})();
