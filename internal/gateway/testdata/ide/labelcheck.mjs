// labelProblems measures, in a page or frame that shows the family page, where Cytoscape drew
// every label that is shown, and returns what a reader could not read: two edge labels whose
// boxes meet, an edge label over a card, a card's label that leaves its card's shape. It also
// returns the smallest label as drawn on the screen, in CSS pixels, and the graph's size.
export function labelProblems(frame) {
  return frame.evaluate(() => {
    const { cy, shown } = window.familyGraph;
    const nodes = shown(cy.nodes());
    const edges = shown(cy.edges());
    const only = { includeNodes: false, includeEdges: false, includeLabels: true, includeMainLabels: true,
      includeSourceLabels: false, includeTargetLabels: false, includeOverlays: false, includeUnderlays: false };
    const body = { includeNodes: true, includeEdges: false, includeLabels: false, includeOverlays: false, includeUnderlays: false };
    const meet = (a, b) => a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2;
    const name = (n) => JSON.stringify(n.data('label'));
    const edgeName = (e) => `${JSON.stringify(e.data('label'))} (${e.source().data('label')} → ${e.target().data('label')})`;
    const problems = [];
    const labels = edges.filter((e) => e.data('label')).map((e) => ({ e, b: e.boundingBox(only) }));
    for (let i = 0; i < labels.length; i++) {
      for (let j = i + 1; j < labels.length; j++) {
        if (meet(labels[i].b, labels[j].b)) problems.push(`edge labels ${edgeName(labels[i].e)} and ${edgeName(labels[j].e)} overlap`);
      }
    }
    const cards = nodes.map((n) => ({ n, b: n.boundingBox(body) }));
    for (const l of labels) {
      for (const c of cards) {
        if (meet(l.b, c.b)) problems.push(`edge label ${edgeName(l.e)} covers the card ${name(c.n)}`);
      }
    }
    // A card's label stays inside its shape: each corner of the label's box is inside the
    // shape Cytoscape draws (its own hit test).
    const r = cy.renderer();
    for (const n of nodes) {
      const b = n.boundingBox(only);
      const p = n.position();
      const shape = r.nodeShapes[r.getNodeShape(n)];
      const w = n.width();
      const h = n.height();
      const corners = [[b.x1, b.y1], [b.x2, b.y1], [b.x1, b.y2], [b.x2, b.y2]];
      if (corners.some(([x, y]) => !shape.checkPoint(x, y, 0, w, h, p.x, p.y, 'auto', [0, 0]))) {
        problems.push(`the label of the card ${name(n)} (${b.w.toFixed(0)}×${b.h.toFixed(0)}) leaves its ${r.getNodeShape(n)} (${w.toFixed(0)}×${h.toFixed(0)})`);
      }
    }
    const fonts = nodes.union(edges).map((e) => e.pstyle('font-size').pfValue * cy.zoom());
    return {
      problems, nodes: nodes.length, edges: edges.length,
      smallestFont: fonts.length ? Math.min(...fonts) : 0,
      zoom: cy.zoom(), width: cy.width(), height: cy.height(),
    };
  });
}
