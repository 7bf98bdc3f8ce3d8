// The family page: asks the gateway's GraphQL endpoint for a top account's cards and
// relationships, draws them top-down with Cytoscape.js and the ELK layered layout, and follows
// the family's live events over SSE. Everything it loads and asks comes from its own origin.
(() => {
  'use strict';

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
  // Each type's label wraps at its own width, so that its shape, sized to hold the label (see
  // fitCardsToLabels), keeps a card's proportions; fit is how much of the shape's half-width and
  // half-height the label's may take.
  const TYPES = {
    INDIVIDUAL: { name: 'Individual', shape: 'ellipse', fill: '#cfe3ff', wrap: 150, fit: { x: 0.8, y: 0.6 } },
    TRUST: { name: 'Trust', shape: 'round-rectangle', fill: '#cdeec4', wrap: 150, fit: { x: 1, y: 1 } },
    ENTITY: { name: 'Entity', shape: 'rectangle', fill: '#ffdcb5', wrap: 150, fit: { x: 1, y: 1 } },
    CHARITY: { name: 'Charity', shape: 'round-diamond', fill: '#f6cde5', wrap: 100, fit: { x: 0.5, y: 0.4 } },
    WILL: { name: 'Will', shape: 'round-tag', fill: '#e2d8ff', wrap: 130, fit: { x: 0.66, y: 0.6 } },
    CLASS: { name: 'Class', shape: 'hexagon', fill: '#fff0a6', wrap: 130, fit: { x: 0.66, y: 0.6 } },
  };
  const OTHER = { shape: 'rectangle', fill: '#eeeeee', wrap: 150, fit: { x: 1, y: 1 } };
  const MIN_CARD = { w: 120, h: 44 };
  const CARD_PAD = 6; // between a card's label and its outline
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

  // Labels are measured before the layout, in the font Cytoscape draws them in, so that the
  // layout can make room for them: cards are sized to hold their names, and each edge's label
  // is a box the layout places between the layers, clear of every card and every other label.
  const FONT = 'Helvetica Neue, Helvetica, Arial, sans-serif';
  const CARD_FONT = 12;
  const EDGE_FONT = 11;
  const LABEL_PAD = 2; // the edge labels' background padding

  const cy = cytoscape({
    container: $('graph'),
    wheelSensitivity: 0.3,
    boxSelectionEnabled: false,
    style: [
      {
        selector: 'node',
        style: {
          label: 'data(label)', 'text-wrap': 'wrap', 'text-max-width': 'data(wrap)', 'font-size': CARD_FONT, 'font-family': FONT, color: '#111',
          'text-valign': 'center', 'text-halign': 'center', width: 'data(w)', height: 'data(h)',
          shape: 'data(shape)', 'background-color': 'data(fill)', 'border-width': 1, 'border-color': '#333',
        },
      },
      { selector: 'node:selected', style: { 'border-width': 4, 'border-color': '#0645ad' } },
      {
        // Edges follow the route the layout gave them, through the spot it kept for the label.
        selector: 'edge',
        style: {
          'curve-style': 'straight', width: 1.5, 'line-color': '#4a4a4a', 'target-arrow-color': '#4a4a4a',
          'target-arrow-shape': 'triangle', label: 'data(label)', 'font-size': EDGE_FONT, 'font-family': FONT, color: '#222',
          'text-background-color': '#fff', 'text-background-opacity': 1, 'text-background-padding': LABEL_PAD,
        },
      },
      {
        selector: 'edge[?route]',
        style: {
          'curve-style': 'segments', 'edge-distances': 'node-position', 'segment-radius': 12,
          'segment-weights': (e) => e.data('route').weights, 'segment-distances': (e) => e.data('route').distances,
          'text-margin-x': (e) => e.data('route').margin.x, 'text-margin-y': (e) => e.data('route').margin.y,
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
      const t = TYPES[c.type] || { ...OTHER, name: c.type };
      if (open(c.type)) {
        nodes.push({ group: 'nodes', data: { id: refOf(c), label: c.displayName, type: c.type, shape: t.shape, fill: t.fill, wrap: t.wrap, w: MIN_CARD.w, h: MIN_CARD.h, card: c } });
      } else {
        groups.set(c.type, (groups.get(c.type) || 0) + 1);
      }
    }
    for (const [type, n] of groups) {
      const t = TYPES[type] || { ...OTHER, name: type };
      nodes.push({ group: 'nodes', data: { id: `group:${type}`, label: `${t.name} × ${n}\n(click to show)`, type, shape: t.shape, fill: t.fill, wrap: t.wrap, w: MIN_CARD.w, h: MIN_CARD.h, grouped: n } });
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
    const generation = ++drawing;
    cy.startBatch();
    cy.elements().remove();
    cy.add(nodes.concat(edges));
    cy.endBatch();
    fitCardsToLabels();
    applyFilters();
    renderTable(resolved, unresolved, byRef);
    $('expand-all').hidden = expanded === null;
    $('group').hidden = expanded !== null || account.contacts.length <= GROUP_ABOVE;
    status(`Laying out ${nodes.length} nodes and ${edges.length} edges…`);
    layOut().then(() => {
      if (generation !== drawing) return; // a newer drawing replaced this one
      fitReadably();
      const ms = Math.round(performance.now() - started);
      Object.assign(window.familyGraph, {
        state: 'ready', nodes: nodes.length, edges: edges.length, cards: account.contacts.length,
        grouped: groups.size, layoutMs: ms, rendered: (window.familyGraph.rendered || 0) + 1,
      });
      status(`${account.contacts.length} cards, ${resolved.length} relationships` +
        (groups.size ? `; ${groups.size} types grouped: click one to show its cards` : '') +
        (unresolved.length ? `; ${unresolved.length} name a card this family does not have` : '') +
        `. The family has ${account.documents.totalCount} documents.`);
    }, (e) => {
      if (generation !== drawing) return;
      status(`The family could not be laid out: ${e.message}`);
      window.familyGraph.state = 'failed';
    });
  }
  let drawing = 0;

  // fitCardsToLabels sizes each card so that its label, wrapped at its type's width, lies
  // inside its shape: a label's half-width and half-height, as fractions of the shape's, must
  // be a point inside the shape drawn in a unit square (a diamond: x + y <= 1; an ellipse:
  // x² + y² <= 1; a tag or a hexagon: x <= 1 - y/2, their slanted sides).
  function fitCardsToLabels() {
    const only = { includeNodes: false, includeEdges: false, includeLabels: true, includeOverlays: false, includeUnderlays: false };
    cy.batch(() => {
      cy.nodes().forEach((n) => {
        const t = TYPES[n.data('type')] || OTHER;
        const b = n.boundingBox(only);
        const w = Math.max(MIN_CARD.w, Math.ceil((b.w + 2 * CARD_PAD) / t.fit.x));
        const h = Math.max(MIN_CARD.h, Math.ceil((b.h + 2 * CARD_PAD) / t.fit.y));
        n.data({ w, h });
      });
    });
  }

  // textWidth is how wide Cytoscape draws a one-line label.
  const measure = document.createElement('canvas').getContext('2d');
  function textWidth(text, size) {
    measure.font = `${size}px ${FONT}`;
    return measure.measureText(text).width;
  }

  // layOut places the cards with ELK's layered algorithm, top-down, each edge's label a box
  // that ELK keeps clear of cards and other labels, on the edge's route (inline), and draws
  // each edge along the route ELK gave it.
  async function layOut() {
    const graph = {
      id: 'root',
      layoutOptions: {
        'elk.algorithm': 'layered', 'elk.direction': 'DOWN',
        'elk.edgeRouting': 'POLYLINE',
        'elk.layered.spacing.nodeNodeBetweenLayers': 24, 'elk.spacing.nodeNode': 20,
        'elk.spacing.edgeLabel': 4, 'elk.spacing.edgeNode': 12, 'elk.spacing.edgeEdge': 8,
        'elk.layered.spacing.edgeNodeBetweenLayers': 12, 'elk.layered.spacing.edgeEdgeBetweenLayers': 8,
        'elk.edgeLabels.placement': 'CENTER', 'elk.edgeLabels.inline': true,
        'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
      },
      children: cy.nodes().map((n) => ({ id: n.id(), width: n.data('w'), height: n.data('h') })),
      edges: cy.edges().map((e) => ({
        id: e.id(), sources: [e.source().id()], targets: [e.target().id()],
        labels: e.data('label') ? [{
          text: e.data('label'),
          width: Math.ceil(textWidth(e.data('label'), EDGE_FONT)) + 2 * LABEL_PAD + 4,
          height: Math.ceil(EDGE_FONT * 1.3) + 2 * LABEL_PAD + 2,
          layoutOptions: { 'elk.edgeLabels.inline': true },
        }] : [],
      })),
    };
    const laid = await elk.layout(graph);
    cy.batch(() => {
      for (const k of laid.children) {
        cy.getElementById(k.id).position({ x: k.x + k.width / 2, y: k.y + k.height / 2 });
      }
    });
    cy.batch(() => {
      for (const k of laid.edges) {
        const e = cy.getElementById(k.id);
        const label = k.labels && k.labels[0];
        const at = label ? { x: label.x + label.width / 2, y: label.y + label.height / 2 } : null;
        e.data('route', routeOf(e, (k.sections || []).flatMap((s) => s.bendPoints || []), at));
      }
    });
    // Cytoscape puts an edge's label at the middle of its drawn path; the margin moves it to
    // where ELK put it.
    cy.batch(() => {
      cy.edges().forEach((e) => {
        const route = e.data('route');
        if (!route || !route.at) return;
        const mid = e.midpoint();
        e.data('route', { ...route, margin: { x: route.at.x - mid.x, y: route.at.y - mid.y } });
      });
    });
  }
  const elk = new ELK();

  // routeOf turns ELK's bend points of an edge, and its label's centre, into Cytoscape's
  // segments: each point as a weight along the line between the cards' centres and a distance
  // from it.
  function routeOf(e, bends, at) {
    const s = e.source().position();
    const t = e.target().position();
    const dx = t.x - s.x;
    const dy = t.y - s.y;
    const len2 = dx * dx + dy * dy || 1;
    const len = Math.sqrt(len2);
    const points = bends.slice();
    if (at) {
      // The label lies on the route: through it, between the bends before and after it.
      const along = (p) => ((p.x - s.x) * dx + (p.y - s.y) * dy) / len2;
      const i = points.findIndex((p) => along(p) > along(at));
      points.splice(i < 0 ? points.length : i, 0, at);
    }
    if (!points.length) return null; // a straight line, drawn as such
    return {
      weights: points.map((p) => ((p.x - s.x) * dx + (p.y - s.y) * dy) / len2),
      distances: points.map((p) => ((p.y - s.y) * dx - (p.x - s.x) * dy) / len),
      margin: { x: 0, y: 0 },
      at,
    };
  }

  // fitReadably shows the whole graph if its labels can be read that way, and otherwise its
  // top at the smallest zoom at which they can: a reader pans, or zooms out, from there.
  function fitReadably() {
    const eles = shown(cy.elements());
    cy.fit(eles, 24);
    if (cy.zoom() >= READABLE) return;
    const bb = eles.boundingBox();
    cy.zoom(READABLE);
    // Centred if it is narrow enough, else from its left edge.
    const x = bb.w * READABLE + 48 <= cy.width() ? cy.width() / 2 - ((bb.x1 + bb.x2) / 2) * READABLE : 24 - bb.x1 * READABLE;
    cy.pan({ x, y: 24 - bb.y1 * READABLE });
  }
  // The smallest zoom at which an edge's label is drawn 10 pixels high or more.
  const READABLE = 10 / EDGE_FONT;

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
    const out = [`<svg xmlns="http://www.w3.org/2000/svg" viewBox="${bb.x1 - pad} ${bb.y1 - pad} ${bb.w + 2 * pad} ${bb.h + 2 * pad}" width="${Math.round(bb.w + 2 * pad)}" height="${Math.round(bb.h + 2 * pad)}" font-family="${FONT}">`,
      '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" fill="#4a4a4a"/></marker></defs>',
      `<title>${esc(family ? family.name : wid)}</title>`];
    // Each edge as drawn: from where it leaves its source, through its bends, to where it
    // meets its target; its label where the layout put it, on a white box as on the screen.
    shown(cy.edges()).forEach((e) => {
      const points = [e.sourceEndpoint(), ...(e.segmentPoints() || []), e.targetEndpoint()];
      const route = e.data('route');
      const at = route && route.at ? route.at : e.midpoint();
      const dash = e.data('role') === 'JOINT_OWNER' ? ' stroke-dasharray="6 4"' : '';
      const w = textWidth(e.data('label'), EDGE_FONT) + 2 * LABEL_PAD;
      const h = EDGE_FONT + 2 * LABEL_PAD;
      out.push(`<g class="edge" data-role="${esc(e.data('role'))}"><polyline points="${points.map((p) => `${p.x},${p.y}`).join(' ')}" fill="none" stroke="#4a4a4a" stroke-width="1.5"${dash} marker-end="url(#arrow)"/>` +
        `<rect x="${at.x - w / 2}" y="${at.y - h / 2}" width="${w}" height="${h}" fill="#fff"/>` +
        `<text x="${at.x}" y="${at.y + EDGE_FONT / 3}" font-size="${EDGE_FONT}" text-anchor="middle" fill="#222">${esc(e.data('label'))}</text></g>`);
    });
    shown(cy.nodes()).forEach((n) => {
      const p = n.position(); const w = n.width(); const h = n.height();
      let shape;
      if (n.data('shape') === 'ellipse') shape = `<ellipse cx="${p.x}" cy="${p.y}" rx="${w / 2}" ry="${h / 2}"`;
      else if (n.data('shape') === 'round-diamond') shape = `<polygon points="${p.x},${p.y - h / 2} ${p.x + w / 2},${p.y} ${p.x},${p.y + h / 2} ${p.x - w / 2},${p.y}"`;
      else shape = `<rect x="${p.x - w / 2}" y="${p.y - h / 2}" width="${w}" height="${h}" rx="${n.data('shape') === 'rectangle' ? 0 : 8}"`;
      out.push(`<g class="card" data-type="${esc(n.data('type'))}">${shape} fill="${n.data('fill')}" stroke="#333"/>` +
        `<text x="${p.x}" y="${p.y + 4}" font-size="${CARD_FONT}" text-anchor="middle" fill="#111">${esc(n.data('label'))}</text></g>`);
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
