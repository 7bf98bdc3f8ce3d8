// The chat page the SDK frames (protocol assistant-embed/1.0). It stays empty unless its
// parent's origin is on the allow-list the server put in data-embed-origins; then it says
// ready, takes session tokens by postMessage only, and talks to /v1/chat/* with them.
(function () {
  'use strict';
  var PROTOCOL = 'assistant-embed/1.0';
  // 'self' is this page's own origin: a gateway serves the sandbox, and its pop-out, on one.
  var allowed = (document.documentElement.getAttribute('data-embed-origins') || '').split(' ').filter(Boolean)
    .map(function (o) { return o === "'self'" ? window.location.origin : o; });
  // The path the sandbox is served below ('' at its root, '/sandbox' on a gateway's origin).
  var base = document.documentElement.getAttribute('data-base') || '';
  var parentOrigin = null;
  var token = null;
  var pending = null; // the message that waits for a token
  var expiryTimer = null;
  var waitTimer = null;
  var IDENTIFY_WITHIN = 15000;
  var wide = false;

  function post(message) {
    message.protocol = PROTOCOL;
    window.parent.postMessage(message, parentOrigin);
  }

  // vouched reports whether the browser agrees about who the parent is.
  function vouched(origin) {
    var anc = window.location.ancestorOrigins;
    if (anc && anc.length > 0 && anc[0] !== origin) return false;
    if (document.referrer) {
      try {
        if (new URL(document.referrer).origin !== origin) return false;
      } catch (e) {
        return false;
      }
    }
    return true;
  }

  window.addEventListener('message', function (e) {
    if (window.parent === window || e.source !== window.parent) return;
    var m = e.data;
    if (!m || typeof m !== 'object' || m.protocol !== PROTOCOL) return;
    if (parentOrigin === null) {
      // An unlisted page gets nothing: no ready, no error, an empty window.
      if (m.type !== 'hello' || allowed.indexOf(e.origin) < 0 || !vouched(e.origin)) return;
      parentOrigin = e.origin;
      connect();
      return;
    }
    if (e.origin !== parentOrigin) return;
    if (m.type === 'identify' && typeof m.token === 'string' && m.token !== '') {
      token = m.token;
      clearTimeout(waitTimer);
      load();
    }
  });

  // connect checks that the service answers, then shows the chat and says ready.
  function connect() {
    fetch(base + '/healthz', { cache: 'no-store' }).then(function (r) {
      if (!r.ok) throw new Error('the assistant is unavailable (' + r.status + ')');
      document.getElementById('chat').hidden = false;
      post({ type: 'ready' });
    }).catch(function (err) {
      post({ type: 'error', message: err.message });
    });
  }

  function call(method, path, body) {
    var headers = { Authorization: 'Bearer ' + token };
    if (body) headers['Content-Type'] = 'application/json';
    return fetch(path, { method: method, headers: headers, body: body ? JSON.stringify(body) : undefined, cache: 'no-store' })
      .then(function (r) {
        return r.json().catch(function () { return {}; }).then(function (j) { return { status: r.status, body: j }; });
      });
  }

  // expired asks the page for a new token; a message waiting for it fails when none comes
  // within the spec's 15 seconds (its text stays in the box, to send again).
  function expired() {
    token = null;
    clearTimeout(expiryTimer);
    clearTimeout(waitTimer);
    waitTimer = setTimeout(function () {
      if (token || pending === null) return;
      pending = null;
      post({ type: 'error', message: 'the message was not sent: the session expired and no new token came within 15 seconds' });
    }, IDENTIFY_WITHIN);
    post({ type: 'session_expired' });
  }

  // answered shows a conversation and sets the session to expire when the server says.
  function answered(res) {
    if (res.status === 401 && /expired/i.test(res.body.message || '')) {
      expired();
      return false;
    }
    if (res.status !== 200) {
      post({ type: 'error', message: res.body.message || 'the assistant answered ' + res.status });
      return false;
    }
    render(res.body.messages || []);
    clearTimeout(expiryTimer);
    var left = new Date(res.body.expires_at).getTime() - Date.now();
    if (left > 0) expiryTimer = setTimeout(expired, left);
    return true;
  }

  function load() {
    var t = token;
    call('GET', base + '/v1/chat/history').then(function (res) {
      if (t !== token) return;
      if (answered(res) && pending !== null) send(pending);
    }).catch(function (err) {
      post({ type: 'error', message: err.message });
    });
  }

  function send(text) {
    pending = text;
    if (!token) return; // sent after the next identify
    call('POST', base + '/v1/chat/messages', { text: text }).then(function (res) {
      if (!answered(res)) return;
      pending = null;
      document.getElementById('text').value = '';
      // The reply is in the conversation already; it is a notice too only for a reader who
      // was not looking (the window hidden), or it would show twice.
      var last = res.body.messages[res.body.messages.length - 1];
      if (document.hidden) post({ type: 'notification', title: 'Assistant', body: last ? last.text : '', level: 'info' });
    }).catch(function (err) {
      post({ type: 'error', message: err.message });
    });
  }

  function render(messages) {
    var list = document.getElementById('messages');
    list.textContent = '';
    document.getElementById('empty').hidden = messages.length > 0;
    messages.forEach(function (m) {
      var li = document.createElement('li');
      li.className = m.from;
      li.textContent = m.text;
      list.appendChild(li);
    });
    list.scrollTop = list.scrollHeight;
  }

  document.addEventListener('DOMContentLoaded', function () {
    document.getElementById('compose').addEventListener('submit', function (e) {
      e.preventDefault();
      var text = document.getElementById('text').value.trim();
      if (text && parentOrigin) send(text);
    });
    document.getElementById('wider').addEventListener('click', function () {
      if (!parentOrigin) return;
      wide = !wide;
      this.textContent = wide ? 'Narrower' : 'Wider';
      post({ type: 'resizerequest', widthDelta: wide ? 200 : -200 });
    });
  });
})();
