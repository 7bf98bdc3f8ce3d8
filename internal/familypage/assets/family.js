// The family page: asks the gateway's GraphQL endpoint for a top account's cards and
// relationships, draws them top-down with Cytoscape.js and the ELK layered layout, and follows
// the family's live events over SSE. Everything it loads and asks comes from its own origin.
(() => {
  'use strict';
  cytoscape.use(cytoscapeElk);

  const root = document.getElementById('family');
  const wid = root.dataset.wid;
  const endpoint = root.dataset.endpoint;
  const ide = root.dataset.ide;

  // The query that feeds the page; the IDE link opens it.
  const QUERY = `query FamilyGraph($wid: ID!) {
  topAccount(wid: $wid) {
    wid
    name
    documents(first: 1) { totalCount }
    contacts {
      __typename
      ... on ContactCard { id externalId type displayName }
      ... on Individual { firstName middleName lastName }
      ... on Trust { trustType }
      ... on Will { willType }
      ... on Class { currentParties { parties { party { externalId } fraction { numerator denominator } } } }
    }
    relationships { role percentage source { externalId } target { externalId } }
  }
}`;
  const EVENTS = `subscription FamilyEvents($wid: ID!) {
  events(filter: { wids: [$wid] }) { id eventType timestamp }
}`;

  // Card types: shape and fill. #111 text is above 4.5:1 on each fill (WCAG AA).
  const TYPES = {
    INDIVIDUAL: { name: 'Individual', shape: 'ellipse', fill: '#cfe3ff' },
    TRUST: { name: 'Trust', shape: 'round-rectangle', fill: '#cdeec4' },
    ENTITY: { name: 'Entity', shape: 'rectangle', fill: '#ffdcb5' },
    CHARITY: { name: 'Charity', shape: 'round-diamond', fill: '#f6cde5' },
    WILL: { name: 'Will', shape: 'round-tag', fill: '#e2d8ff' },
    CLASS: { name: 'Class', shape: 'hexagon', fill: '#fff0a6' },
  };
  // Edges run from the card named by the reference to the card holding it, so that the layout
  // puts creators above trusts, owners above entities and testators above wills.
  const ROLES = {
    TRUST_CREATOR: 'created',
    INITIAL_TRUSTEE: 'trustee of',
    OWNER: 'owns',
    JOINT_OWNER: 'jointly owns',
    TESTATOR: 'testator of',
    EXECUTOR: 'executor of',
    CLASS_PARTY: 'party of',
  };
  // Events that change the cards or their edges, or what the page shows of them.
  const REFETCH = new Set(['ASSET_ADDED', 'ASSET_DELETED', 'ASSET_OWNERSHIP_ADDED', 'ASSET_OWNERSHIP_DELETED',
    'ASSET_BENEFICIARY_ADDED', 'ASSET_BENEFICIARY_DELETED', 'DOCUMENT_COMPLETED']);

  const $ = (id) => document.getElementById(id);
  const status = (text) => { $('status').textContent = text; };

  // The caller's credentials: the headers the gateway's IDE keeps for this origin, if any
  // (an Authorization header set there), so the page acts as the same caller.
  function callerHeaders() {
    try {
      const h = JSON.parse(localStorage.getItem('graphiql:headers') || '{}');
      return h && typeof h === 'object' && !Array.isArray(h) ? h : {};
    } catch {
      return {};
    }
  }

  async function graphql(query, variables) {
    const resp = await fetch(endpoint, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { ...callerHeaders(), 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    const body = await resp.json();
    if (body.errors && body.errors.length) {
      throw new Error(body.errors.map((e) => e.message).join('; '));
    }
    return body.data;
  }

  const cy = cytoscape({
    container: $('graph'),
    wheelSensitivity: 0.3,
    boxSelectionEnabled: false,
    style: [
      {
        selector: 'node',
        style: {
          label: 'data(label)', 'text-wrap': 'wrap', 'text-max-width': 118, 'font-size': 11, color: '#111',
          'text-valign': 'center', 'text-halign': 'center', width: 132, height: 46,
          shape: 'data(shape)', 'background-color': 'data(fill)', 'border-width': 1, 'border-color': '#333',
        },
      },
      { selector: 'node:selected', style: { 'border-width': 4, 'border-color': '#0645ad' } },
      {
        selector: 'edge',
        style: {
          'curve-style': 'bezier', width: 1.5, 'line-color': '#4a4a4a', 'target-arrow-color': '#4a4a4a',
          'target-arrow-shape': 'triangle', label: 'data(label)', 'font-size': 9, color: '#222',
          'text-background-color': '#fff', 'text-background-opacity': 1, 'text-background-padding': 2,
        },
      },
      { selector: 'edge[role = "JOINT_OWNER"]', style: { 'line-style': 'dashed', 'line-color': '#8a4500', 'target-arrow-color': '#8a4500' } },
      { selector: '.filtered', style: { display: 'none' } },
    ],
  });
  // What is drawn: not filtered out, and for an edge, both its cards drawn. (Cytoscape's
  // own selector for that does not see a class's display until the next frame.)
  const drawn = (c) => c.style('display') !== 'none';
  const shown = (eles) => eles.filter((e) => drawn(e) && (e.isNode() || (drawn(e.source()) && drawn(e.target()))));
  // Tests and the curious read the graph here.
  window.familyGraph = { cy, shown, query: QUERY, state: 'loading' };

  let family = null;

  // Beyond this many cards, the page draws one node per card type at first, and a type's cards
  // when its node is clicked: thousands of cards at once are a texture, not a picture.
  const GROUP_ABOVE = 300;
  let expanded; // the types drawn card by card; null: all of them. Kept across refetches.
  let large = false;

  function render(account) {
    family = account;
    $('family-name').textContent = account.name;
    document.title = `${account.name} · Advisor GraphQL gateway`;
    const isLarge = account.contacts.length > GROUP_ABOVE;
    if (expanded === undefined || isLarge !== large) {
      expanded = isLarge ? new Set() : null;
    }
    large = isLarge;
    draw();
  }

  function draw() {
    const account = family;
    const refOf = (c) => c.externalId || c.id;
    const byRef = new Map(account.contacts.map((c) => [refOf(c), c]));
    const open = (type) => expanded === null || expanded.has(type);
    const nodeOf = (c) => (open(c.type) ? refOf(c) : `group:${c.type}`);
    const nodes = [];
    const groups = new Map();
    for (const c of account.contacts) {
      const t = TYPES[c.type] || { name: c.type, shape: 'rectangle', fill: '#eeeeee' };
      if (open(c.type)) {
        nodes.push({ group: 'nodes', data: { id: refOf(c), label: c.displayName, type: c.type, shape: t.shape, fill: t.fill, card: c } });
      } else {
        groups.set(c.type, (groups.get(c.type) || 0) + 1);
      }
    }
    for (const [type, n] of groups) {
      const t = TYPES[type] || { name: type, shape: 'rectangle', fill: '#eeeeee' };
      nodes.push({ group: 'nodes', data: { id: `group:${type}`, label: `${t.name} × ${n}\n(click to show)`, type, shape: t.shape, fill: t.fill, grouped: n } });
    }
    const edges = [];
    const resolved = [];
    const unresolved = [];
    const bundles = new Map();
    account.relationships.forEach((r, i) => {
      const holder = byRef.get(r.source.externalId);
      const named = byRef.get(r.target.externalId);
      if (!holder || !named) {
        unresolved.push(r);
        return;
      }
      resolved.push(r);
      const from = nodeOf(named);
      const to = nodeOf(holder);
      if (from.startsWith('group:') || to.startsWith('group:')) {
        if (from === to) return; // within one group
        const key = `${from}|${to}|${r.role}`;
        bundles.set(key, (bundles.get(key) || 0) + 1);
        return;
      }
      edges.push({ group: 'edges', data: { id: `e${i}`, source: from, target: to, role: r.role, label: ROLES[r.role] + share(r, holder), rel: r } });
    });
    for (const [key, n] of bundles) {
      const [from, to, role] = key.split('|');
      edges.push({ group: 'edges', data: { id: `b:${key}`, source: from, target: to, role, label: `${ROLES[role]} × ${n}` } });
    }
    const started = performance.now();
    cy.startBatch();
    cy.elements().remove();
    cy.add(nodes.concat(edges));
    cy.endBatch();
    applyFilters();
    renderTable(resolved, unresolved, byRef);
    $('expand-all').hidden = expanded === null;
    $('group').hidden = expanded !== null || account.contacts.length <= GROUP_ABOVE;
    status(`Laying out ${nodes.length} nodes and ${edges.length} edges…`);
    const layout = cy.layout({
      name: 'elk', fit: true, padding: 24, animate: false,
      elk: { algorithm: 'layered', 'elk.direction': 'DOWN', 'elk.layered.spacing.nodeNodeBetweenLayers': 70, 'elk.spacing.nodeNode': 28 },
    });
    layout.one('layoutstop', () => {
      const ms = Math.round(performance.now() - started);
      Object.assign(window.familyGraph, {
        state: 'ready', nodes: nodes.length, edges: edges.length, cards: account.contacts.length,
        grouped: groups.size, layoutMs: ms, rendered: (window.familyGraph.rendered || 0) + 1,
      });
      status(`${account.contacts.length} cards, ${resolved.length} relationships` +
        (groups.size ? `; ${groups.size} types grouped: click one to show its cards` : '') +
        (unresolved.length ? `; ${unresolved.length} name a card this family does not have` : '') +
        `. The family has ${account.documents.totalCount} documents.`);
    });
    layout.run();
  }

  // share is an edge's percentage, or the fraction a class gives the party.
  function share(r, holder) {
    if (r.percentage != null) return ` ${r.percentage}%`;
    const party = r.role === 'CLASS_PARTY' && holder.currentParties?.parties?.find((p) => p.party?.externalId === r.target.externalId);
    return party && party.fraction ? ` ${party.fraction.numerator}/${party.fraction.denominator}` : '';
  }

  function expand(type) {
    if (expanded === null) return;
    expanded.add(type);
    if (Object.keys(TYPES).every((t) => expanded.has(t))) expanded = null;
    draw();
  }
  $('expand-all').addEventListener('click', () => { expanded = null; draw(); });
  $('group').addEventListener('click', () => { expanded = new Set(); draw(); });

  function renderTable(resolved, unresolved, byRef) {
    const body = $('edges').tBodies[0];
    body.replaceChildren();
    const name = (ref) => (byRef.has(ref) ? byRef.get(ref).displayName : `${ref} (not a card of this family)`);
    for (const r of resolved.concat(unresolved)) {
      const tr = body.insertRow();
      tr.dataset.role = r.role;
      const holder = byRef.get(r.source.externalId);
      for (const text of [name(r.target.externalId), ROLES[r.role] || r.role, holder ? share(r, holder).trim() : '', name(r.source.externalId)]) {
        tr.insertCell().textContent = text;
      }
    }
  }

  // Filters: a checkbox for each card type and each role, all on at first.
  const hiddenTypes = new Set();
  const hiddenRoles = new Set();
  function filterBoxes(fieldset, entries, hidden, swatch) {
    for (const [key, label] of entries) {
      const l = document.createElement('label');
      const box = document.createElement('input');
      box.type = 'checkbox';
      box.checked = true;
      box.value = key;
      box.addEventListener('change', () => {
        if (box.checked) hidden.delete(key); else hidden.add(key);
        applyFilters();
      });
      l.append(box);
      if (swatch) {
        const s = document.createElement('span');
        s.className = 'swatch';
        s.style.background = swatch(key);
        l.append(s);
      }
      l.append(label);
      fieldset.append(l);
    }
  }
  filterBoxes($('type-filter'), Object.entries(TYPES).map(([k, t]) => [k, t.name]), hiddenTypes, (k) => TYPES[k].fill);
  filterBoxes($('role-filter'), Object.entries(ROLES), hiddenRoles);
  function applyFilters() {
    cy.batch(() => {
      cy.nodes().forEach((n) => n.toggleClass('filtered', hiddenTypes.has(n.data('type'))));
      cy.edges().forEach((e) => e.toggleClass('filtered', hiddenRoles.has(e.data('role'))));
    });
  }

  // Details of a card.
  function show(node) {
    if (node.data('grouped')) {
      expand(node.data('type'));
      return;
    }
    cy.nodes().unselect();
    node.select();
    const c = node.data('card');
    const rows = [['Type', TYPES[c.type] ? TYPES[c.type].name : c.type], ['Name', c.displayName], ['External id', c.externalId || '—'], ['Id', c.id]];
    for (const k of ['firstName', 'middleName', 'lastName', 'trustType', 'willType']) {
      if (c[k]) rows.push([k.replace(/[A-Z]/g, (m) => ` ${m.toLowerCase()}`).replace(/^./, (m) => m.toUpperCase()), c[k]]);
    }
    rows.push(['Relationships', String(node.connectedEdges().length)]);
    rows.push(["The family's documents", String(family.documents.totalCount)]);
    const dl = document.createElement('dl');
    for (const [k, v] of rows) {
      const dt = document.createElement('dt');
      dt.textContent = k;
      const dd = document.createElement('dd');
      dd.textContent = v;
      dl.append(dt, dd);
    }
    const h = document.createElement('h2');
    h.textContent = c.displayName;
    $('details').replaceChildren(h, dl);
  }
  cy.on('tap', 'node', (e) => show(e.target));

  // Keyboard: arrows move between the visible cards in reading order, Enter shows one.
  function ordered() {
    return shown(cy.nodes()).sort((a, b) => (a.position('y') - b.position('y')) || (a.position('x') - b.position('x')));
  }
  $('graph').addEventListener('keydown', (e) => {
    const nodes = ordered();
    if (!nodes.length) return;
    const current = cy.nodes(':selected')[0];
    let i = current ? nodes.indexOf(current) : -1;
    switch (e.key) {
      case 'ArrowRight': case 'ArrowDown': i = Math.min(i + 1, nodes.length - 1); break;
      case 'ArrowLeft': case 'ArrowUp': i = Math.max(i - 1, 0); break;
      case 'Home': i = 0; break;
      case 'End': i = nodes.length - 1; break;
      case 'Enter': case ' ': if (current) show(current); e.preventDefault(); return;
      default: return;
    }
    e.preventDefault();
    const n = nodes[i];
    show(n);
    cy.animate({ center: { eles: n } }, { duration: 150 });
  });

  $('fit').addEventListener('click', () => cy.fit(shown(cy.elements()), 24));
  const zoomBy = (f) => cy.zoom({ level: cy.zoom() * f, renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } });
  $('zoom-in').addEventListener('click', () => zoomBy(1.25));
  $('zoom-out').addEventListener('click', () => zoomBy(0.8));
  $('refresh').addEventListener('click', () => load());
  if (ide) {
    const a = $('ide-link');
    a.href = `${ide}?query=${encodeURIComponent(QUERY)}&variables=${encodeURIComponent(JSON.stringify({ wid }, null, 2))}&operationName=FamilyGraph`;
    a.hidden = false;
  }

  function download(name, blob) {
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = name;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  }
  $('download-png').addEventListener('click', () => download(`family-${wid}.png`, cy.png({ full: true, scale: 2, bg: '#ffffff', output: 'blob' })));
  $('download-svg').addEventListener('click', () => download(`family-${wid}.svg`, new Blob([toSVG()], { type: 'image/svg+xml' })));
  window.familyGraph.toSVG = () => toSVG();

  // toSVG draws the visible graph as SVG, as laid out: Cytoscape draws on a canvas and has no
  // SVG of its own.
  function toSVG() {
    const esc = (s) => String(s).replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' }[c]));
    const bb = shown(cy.elements()).boundingBox();
    const pad = 24;
    const out = [`<svg xmlns="http://www.w3.org/2000/svg" viewBox="${bb.x1 - pad} ${bb.y1 - pad} ${bb.w + 2 * pad} ${bb.h + 2 * pad}" width="${Math.round(bb.w + 2 * pad)}" height="${Math.round(bb.h + 2 * pad)}" font-family="sans-serif">`,
      '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" fill="#4a4a4a"/></marker></defs>',
      `<title>${esc(family ? family.name : wid)}</title>`];
    // An edge ends where it meets its target's box.
    const clip = (from, to, w, h) => {
      const dx = from.x - to.x; const dy = from.y - to.y;
      const s = Math.min(Math.abs(dx) > 0 ? (w / 2) / Math.abs(dx) : Infinity, Math.abs(dy) > 0 ? (h / 2) / Math.abs(dy) : Infinity, 1);
      return { x: to.x + dx * s, y: to.y + dy * s };
    };
    shown(cy.edges()).forEach((e) => {
      const s = e.source().position(); const t = e.target().position();
      const end = clip(s, t, e.target().width(), e.target().height());
      const dash = e.data('role') === 'JOINT_OWNER' ? ' stroke-dasharray="6 4"' : '';
      out.push(`<g class="edge" data-role="${esc(e.data('role'))}"><line x1="${s.x}" y1="${s.y}" x2="${end.x}" y2="${end.y}" stroke="#4a4a4a" stroke-width="1.5"${dash} marker-end="url(#arrow)"/>` +
        `<text x="${(s.x + t.x) / 2}" y="${(s.y + t.y) / 2}" font-size="9" text-anchor="middle" fill="#222">${esc(e.data('label'))}</text></g>`);
    });
    shown(cy.nodes()).forEach((n) => {
      const p = n.position(); const w = n.width(); const h = n.height();
      let shape;
      if (n.data('shape') === 'ellipse') shape = `<ellipse cx="${p.x}" cy="${p.y}" rx="${w / 2}" ry="${h / 2}"`;
      else if (n.data('shape') === 'round-diamond') shape = `<polygon points="${p.x},${p.y - h / 2} ${p.x + w / 2},${p.y} ${p.x},${p.y + h / 2} ${p.x - w / 2},${p.y}"`;
      else shape = `<rect x="${p.x - w / 2}" y="${p.y - h / 2}" width="${w}" height="${h}" rx="${n.data('shape') === 'rectangle' ? 0 : 8}"`;
      out.push(`<g class="card" data-type="${esc(n.data('type'))}">${shape} fill="${n.data('fill')}" stroke="#333"/>` +
        `<text x="${p.x}" y="${p.y + 4}" font-size="11" text-anchor="middle" fill="#111">${esc(n.data('label'))}</text></g>`);
    });
    out.push('</svg>');
    return out.join('\n');
  }

  async function load() {
    status('Loading the family…');
    try {
      const data = await graphql(QUERY, { wid });
      if (!data.topAccount) {
        status(`There is no top account ${wid}, or the caller may not see it.`);
        window.familyGraph.state = 'missing';
        return;
      }
      render(data.topAccount);
    } catch (e) {
      status(`The family could not be loaded: ${e.message}`);
      window.familyGraph.state = 'failed';
    }
  }

  // Live events over SSE (graphql-sse's distinct connections): each one is listed, and one
  // that changes the cards or their edges refetches the graph. The stream is opened again
  // after a pause when it ends.
  let refetchTimer = null;
  function onEvent(ev) {
    const li = document.createElement('li');
    const time = document.createElement('time');
    time.dateTime = ev.timestamp;
    time.textContent = new Date(ev.timestamp).toLocaleTimeString();
    li.append(time, ` ${ev.eventType.toLowerCase().replace(/_/g, ' ')}`);
    li.dataset.type = ev.eventType;
    $('events').prepend(li);
    while ($('events').children.length > 50) $('events').lastChild.remove();
    if (REFETCH.has(ev.eventType)) {
      clearTimeout(refetchTimer);
      refetchTimer = setTimeout(load, 300); // a burst of events refetches once
    }
  }
  const stop = new AbortController();
  window.addEventListener('pagehide', () => stop.abort());
  async function follow() {
    while (!stop.signal.aborted) {
      try {
        const resp = await fetch(endpoint, {
          method: 'POST', credentials: 'same-origin', signal: stop.signal,
          headers: { ...callerHeaders(), 'Content-Type': 'application/json', Accept: 'text/event-stream' },
          body: JSON.stringify({ query: EVENTS, variables: { wid } }),
        });
        if (!resp.ok || !resp.body) throw new Error(`status ${resp.status}`);
        window.familyGraph.live = true;
        const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value;
          let at;
          while ((at = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, at);
            buf = buf.slice(at + 2);
            const name = (block.match(/^event: ?(.*)$/m) || [])[1];
            const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
            if (name === 'next' && data) {
              const ev = JSON.parse(data).data?.events;
              if (ev) onEvent(ev);
            }
          }
        }
      } catch (e) {
        if (stop.signal.aborted) return;
      }
      window.familyGraph.live = false;
      await new Promise((r) => setTimeout(r, 5000));
    }
  }

  load();
  follow();
})();
