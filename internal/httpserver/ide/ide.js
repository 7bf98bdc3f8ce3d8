// The gateway's GraphQL IDE: GraphiQL with the explorer and a Family tab. It is a file of its
// own, not an inline script, so that the page's Content-Security-Policy allows scripts from
// the gateway only. The page gives it the endpoint, the IDE's header and the default query in
// data- attributes of #graphiql.
(function () {
  'use strict';
  const root = document.getElementById('graphiql');
  const config = root.dataset;
  const url = location.protocol + '//' + location.host + config.endpoint;
  const subscriptionUrl = (location.protocol === 'https:' ? 'wss:' : 'ws:') + '//' + location.host + config.endpoint;

  // Headers are never part of the address: an address lands in history, logs and Referer, and
  // a shared link would carry the sharer's credentials (or plant someone else's). The headers
  // editor is kept in this browser's storage instead, under the IDE's own key (GraphiQL empties
  // its own when it starts) and under GraphiQL's, where the family page finds the caller's
  // credentials. A link that still carries headers has its credentials dropped; the rest join
  // the stored headers.
  const STORED = 'gateway-ide:headers';
  const GRAPHIQL_STORED = 'graphiql:headers';
  const CREDENTIAL = /authorization|cookie|token|secret|password|passwd|session|credential|api[-_]?key|signature|jwt|bearer|^x-.*-key$/i;
  const CREDENTIAL_VALUE = /^\s*(bearer|basic|digest|negotiate|token)\s/i;
  function withoutCredentials(headers) {
    const out = {};
    for (const [k, v] of Object.entries(headers)) {
      if (!CREDENTIAL.test(k) && !(typeof v === 'string' && CREDENTIAL_VALUE.test(v))) out[k] = v;
    }
    return out;
  }
  function storedText() {
    try {
      return localStorage.getItem(STORED) ?? localStorage.getItem(GRAPHIQL_STORED) ?? '';
    } catch {
      return ''; // storage refused (a private window): the headers live as long as the page
    }
  }
  function store(text) {
    try {
      localStorage.setItem(STORED, text);
      localStorage.setItem(GRAPHIQL_STORED, text);
    } catch {}
  }
  function storedHeaders() {
    try {
      const h = JSON.parse(storedText() || '{}');
      return h && typeof h === 'object' && !Array.isArray(h) ? h : {};
    } catch {
      return {};
    }
  }

  // The query, variables and operation name live in the address, so an IDE link can be shared
  // and opens on the same query; nothing else of the address is kept.
  const SHARED = ['query', 'variables', 'operationName'];
  const given = new URLSearchParams(location.search);
  const parameters = {};
  for (const k of SHARED) {
    if (given.get(k)) parameters[k] = given.get(k);
  }
  let headers = storedText();
  if (given.has('headers')) {
    try {
      const linked = JSON.parse(given.get('headers'));
      if (linked && typeof linked === 'object' && !Array.isArray(linked)) {
        const safe = withoutCredentials(linked);
        if (Object.keys(safe).length > 0) headers = JSON.stringify({ ...storedHeaders(), ...safe }, null, 2);
      }
    } catch {}
  }
  function writeAddress() {
    const search = new URLSearchParams();
    for (const k of SHARED) {
      if (parameters[k]) search.set(k, parameters[k]);
    }
    const s = search.toString();
    history.replaceState(null, '', s ? '?' + s : location.pathname);
  }
  writeAddress(); // at once, so that what arrived with credentials is not kept in the history

  const edited = new Set(); // what re-renders when the query or variables change
  function edit(key) {
    return (value) => {
      parameters[key] = value;
      writeAddress();
      edited.forEach((f) => f());
    };
  }

  // The Family tab: the family page of the top account whose wid the query or its variables
  // name, of one picked from the list, or else of the first top account (the one the default
  // query shows). While it is open it takes most of the IDE's width, so that the family can be
  // read; the editors keep the rest, and the drag bar still moves the split.
  const h = React.createElement;
  function namedWID() {
    try {
      const vars = JSON.parse(parameters.variables || '{}');
      if (typeof vars.wid === 'string' && vars.wid) return vars.wid;
    } catch {}
    const m = /\bwid\s*:\s*"([^"]+)"/.exec(parameters.query || '');
    return m ? m[1] : '';
  }
  const FAMILY_FLEX = '3 1 0%';
  function FamilyTab() {
    const [, rerender] = React.useState(0);
    React.useEffect(() => {
      const f = () => rerender((n) => n + 1);
      edited.add(f);
      return () => edited.delete(f);
    }, []);
    const tab = React.useRef(null);
    React.useEffect(() => {
      const pane = tab.current && tab.current.closest('.graphiql-plugin');
      if (!pane) return undefined;
      let before = null;
      // After GraphiQL's own effects, which set the split it stored when the pane opened.
      const frame = requestAnimationFrame(() => {
        before = pane.style.flex;
        pane.style.flex = FAMILY_FLEX;
      });
      return () => {
        cancelAnimationFrame(frame);
        if (before !== null && pane.style.flex === FAMILY_FLEX) pane.style.flex = before;
      };
    }, []);
    const [picked, setPicked] = React.useState('');
    const [accounts, setAccounts] = React.useState(null);
    React.useEffect(() => {
      fetch(url, {
        method: 'POST',
        headers: { ...storedHeaders(), 'Content-Type': 'application/json' },
        body: JSON.stringify({ query: '{ topAccounts(limit: 100) { nodes { wid name } } }' }),
      }).then((r) => r.json()).then((b) => setAccounts(b.data?.topAccounts?.nodes ?? []), () => setAccounts([]));
    }, []);
    const wid = picked || namedWID() || (accounts && accounts.length ? accounts[0].wid : '');
    const listed = accounts || [];
    return h('div', { className: 'family-tab', ref: tab },
      h('label', null, 'Top account ',
        h('select', { value: wid, onChange: (e) => setPicked(e.target.value), 'aria-label': 'Top account' },
          wid && !listed.some((a) => a.wid === wid) ? h('option', { value: wid }, wid) : null,
          !wid ? h('option', { value: '' }, accounts ? '(none)' : 'Loading…') : null,
          listed.map((a) => h('option', { key: a.wid, value: a.wid }, a.name))),
        ' ',
        wid ? h('a', { href: '/family/' + encodeURIComponent(wid), target: '_blank', rel: 'noopener noreferrer' }, 'Open on its own page') : null),
      wid
        ? h('iframe', { src: '/family/' + encodeURIComponent(wid), title: 'The family graph', className: 'family-frame' })
        : h('p', null, accounts ? 'The caller sees no top account: name a wid in the query or its variables.' : 'Loading the top accounts…'));
  }

  // The header tells a development gateway that runs trusted documents only that this is its
  // IDE (see FromIDE); WebSockets carry it in connection_init. GraphiQL's first request, for
  // the schema, goes before its headers editor is drawn and would carry none of its headers:
  // the headers the IDE knows go under whatever GraphiQL passes.
  const ideHeader = { [config.ideHeader]: '1' };
  const graphiqlFetcher = GraphiQL.createFetcher({ url, subscriptionUrl, headers: ideHeader, wsConnectionParams: ideHeader });
  function fetcher(params, opts) {
    let known = {};
    try {
      known = JSON.parse(headers || '{}');
    } catch {}
    return graphiqlFetcher(params, { ...opts, headers: { ...known, ...(opts && opts.headers) } });
  }
  // Stores the headers the IDE opened on once GraphiQL, whose effects run first, has emptied
  // its copy.
  function Stored(props) {
    React.useEffect(() => store(headers), []);
    return props.children;
  }
  ReactDOM.render(h(Stored, null,
    React.createElement(GraphiQL, {
      fetcher,
      // What a first visit and every new tab open on; a query in the address wins.
      defaultQuery: config.defaultQuery,
      query: parameters.query,
      variables: parameters.variables,
      headers,
      operationName: parameters.operationName,
      onEditQuery: edit('query'),
      onEditVariables: edit('variables'),
      onEditOperationName: edit('operationName'),
      onEditHeaders: (value) => { headers = value; store(value); },
      isHeadersEditorEnabled: true,
      // The IDE stores the headers itself; GraphiQL's copy, in its tabs, would outlive them.
      shouldPersistHeaders: false,
      plugins: [GraphiQLPluginExplorer.explorerPlugin(), {
        title: 'Family',
        icon: () => h('svg', { viewBox: '0 0 24 24', width: 20, height: 20, 'aria-hidden': true },
          h('path', { d: 'M12 3v5M12 8l-6 6M12 8l6 6', stroke: 'currentColor', fill: 'none', strokeWidth: 1.5 }),
          h('circle', { cx: 12, cy: 4, r: 2, fill: 'currentColor' }), h('circle', { cx: 6, cy: 17, r: 2.5, fill: 'currentColor' }),
          h('circle', { cx: 18, cy: 17, r: 2.5, fill: 'currentColor' })),
        content: FamilyTab,
      }],
      inputValueDeprecation: true,
    })),
    root,
  );
})();
