/*! Advisor assistant SDK, protocol assistant-embed/1.0 (the sandbox's embed host).
 *
 * The page defines the queue stub (snippet 1.0.0) before loading this script asynchronously:
 *   Assistant('init', {container: 'element-id', title: '...', iframeUrl: '...'})
 *   Assistant('identify', {token: '<session token>'})
 *   Assistant('on', 'ready' | 'session_expired' | 'resizerequest' | 'notification' | 'error' | 'destroy', handler)
 *   (the floating launcher's 'open' | 'close' | 'statechange' | 'unread' are accepted and never fire here)
 *   Assistant('destroy')
 * Calls never throw: a mistake arrives as an `error` event. The session token goes to the
 * chat by postMessage only, never in an address.
 */
(function (w, d) {
  'use strict';
  var PROTOCOL = 'assistant-embed/1.0';
  var EVENTS = ['ready', 'session_expired', 'resizerequest', 'notification', 'error', 'destroy'];
  // The spec: these "belong to the floating launcher and are not used in pop-out mode", the
  // only mode there is; a page written for both subscribes to them, and that is no mistake.
  var LAUNCHER_EVENTS = ['open', 'close', 'statechange', 'unread'];
  var prior = w.Assistant;
  if (prior && prior.loaded) return; // the script was included twice
  var queue = (prior && prior.q) || [];
  var script = d.currentScript;
  // The chat page lives beside this script, /v1/chat to its /v1/sdk/assistant-sdk.js: at the
  // root of its host, or below the path a gateway serves the sandbox at.
  var defaultChatURL = script && script.src ? new URL('../chat', script.src).href : new URL('/v1/chat', w.location.href).href;

  var handlers = {};
  var state = fresh();

  function fresh() {
    return { inited: false, iframe: null, origin: null, ready: false, token: null, listener: null };
  }

  // emit calls the handlers after the current call has returned, so a handler registered
  // later in the same queue still hears about it, and a throwing handler breaks nothing else.
  function emit(name, payload) {
    setTimeout(function () {
      (handlers[name] || []).slice().forEach(function (h) {
        try {
          h(payload);
        } catch (e) {
          setTimeout(function () { throw e; });
        }
      });
    }, 0);
  }

  function fail(message) {
    emit('error', new Error('Assistant: ' + message));
  }

  function post(message) {
    message.protocol = PROTOCOL;
    state.iframe.contentWindow.postMessage(message, state.origin);
  }

  function init(config) {
    if (state.inited) return; // a second init is ignored
    if (!config || typeof config !== 'object') return fail('init needs a config object such as {container: "assistant"}');
    var id = config.container;
    if (typeof id !== 'string' || id === '') return fail('init: container is required: the id of the element the chat fills');
    if (/^[#.]|[\s>+~\[\]:]/.test(id)) return fail('init: container is an element id, not a selector: "' + id + '"');
    var el = d.getElementById(id);
    if (!el) return fail('init: no element has the id "' + id + '"');
    if (config.title !== undefined && typeof config.title !== 'string') return fail('init: title must be a string');
    var src = defaultChatURL;
    if (config.iframeUrl !== undefined) {
      var u;
      try { u = new URL(config.iframeUrl); } catch (e) { u = null; }
      if (!u || (u.protocol !== 'https:' && u.protocol !== 'http:')) return fail('init: iframeUrl must be an absolute http or https URL');
      src = u.href;
    }
    var iframe = d.createElement('iframe');
    iframe.src = src;
    iframe.title = config.title || 'Advisor assistant';
    // Through the CSSOM: a style attribute would need the page's CSP to allow inline styles.
    iframe.style.display = 'block';
    iframe.style.width = '100%';
    iframe.style.height = '100%';
    iframe.style.border = '0';
    state.inited = true;
    state.iframe = iframe;
    state.origin = new URL(src).origin;
    state.listener = receive;
    w.addEventListener('message', receive);
    iframe.addEventListener('load', function () {
      // The chat checks this page's origin against its allow-list, from this message.
      if (state.iframe === iframe) post({ type: 'hello' });
    });
    el.appendChild(iframe);
  }

  function receive(e) {
    if (!state.iframe || e.source !== state.iframe.contentWindow || e.origin !== state.origin) return;
    var m = e.data;
    if (!m || typeof m !== 'object' || m.protocol !== PROTOCOL) return;
    switch (m.type) {
      case 'ready':
        if (state.ready) return;
        state.ready = true;
        if (state.token) post({ type: 'identify', token: state.token });
        emit('ready');
        break;
      case 'session_expired':
        emit('session_expired');
        break;
      case 'resizerequest':
        if (typeof m.widthDelta === 'number' && isFinite(m.widthDelta)) emit('resizerequest', { widthDelta: m.widthDelta });
        break;
      case 'notification': {
        var n = {};
        if (typeof m.title === 'string') n.title = m.title;
        if (typeof m.body === 'string') n.body = m.body;
        if (m.level === 'info' || m.level === 'warning' || m.level === 'error') n.level = m.level;
        emit('notification', n);
        break;
      }
      case 'error':
        fail(typeof m.message === 'string' ? m.message : 'the chat failed');
        break;
    }
  }

  function identify(arg) {
    if (!state.inited) return fail('identify must come after init');
    if (!arg || typeof arg.token !== 'string' || arg.token === '') return fail('identify needs {token: "<session token>"}');
    // A new token replaces the old one in place; the conversation stays.
    state.token = arg.token;
    if (state.ready) post({ type: 'identify', token: state.token });
  }

  function on(name, handler) {
    var launcher = LAUNCHER_EVENTS.indexOf(name) >= 0;
    if (!launcher && EVENTS.indexOf(name) < 0) return fail('on: unknown event "' + name + '"');
    if (typeof handler !== 'function') return fail('on: the handler of "' + name + '" is not a function');
    if (launcher) return;
    (handlers[name] = handlers[name] || []).push(handler);
    // A page that subscribes after the chat is ready still hears that it is.
    if (name === 'ready' && state.ready) {
      setTimeout(function () { handler(); }, 0);
    }
  }

  function destroy() {
    if (state.listener) w.removeEventListener('message', state.listener);
    if (state.iframe && state.iframe.parentNode) state.iframe.parentNode.removeChild(state.iframe);
    state = fresh();
    emit('destroy');
  }

  var commands = { init: init, identify: identify, on: on, destroy: destroy };

  function Assistant(command) {
    var args = Array.prototype.slice.call(arguments, 1);
    var c = Object.prototype.hasOwnProperty.call(commands, command) ? commands[command] : null;
    if (!c) return fail('unknown command "' + command + '"');
    try {
      c.apply(null, args);
    } catch (e) {
      fail(e && e.message ? e.message : String(e));
    }
  }
  Assistant.loaded = true;
  Assistant.v = (prior && prior.v) || '1.0.0';
  Assistant.protocol = PROTOCOL;
  w.Assistant = Assistant;
  for (var i = 0; i < queue.length; i++) Assistant.apply(null, queue[i]);
})(window, document);
