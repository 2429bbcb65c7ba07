/* memtrace's HTML report (report_html.c): draws the memory-over-time chart
 * and the flame graph from the page's JSON data (report_html_data.c).
 * Built into memtrace as a string; loads nothing.  Names from the target
 * only ever go into textContent, never into markup. */
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('mt-data').textContent);
  var chart = document.getElementById('mt-chart');
  var flame = document.getElementById('mt-flame');
  var NS = chart.namespaceURI; /* the inline <svg> is in SVG's namespace */
  var W = 1200;

  function el(tag, attrs, parent, text) {
    var e = document.createElementNS(NS, tag);
    for (var k in attrs)
      if (Object.prototype.hasOwnProperty.call(attrs, k)) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  function human(n) {
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'], i = 0;
    while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
    return i ? n.toFixed(n < 10 ? 2 : 1) + ' ' + u[i] : n + ' B';
  }
  function group(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
  function secs(s) { return s < 10 ? s.toFixed(3) + ' s' : s.toFixed(1) + ' s'; }
  /* A tick step near range/count: 1, 2 or 5 times a power of base's steps. */
  function step(range, count, unit) {
    var raw = range / count / unit, p = Math.pow(10, Math.floor(Math.log10(raw || 1)));
    var m = raw / p, s = m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10;
    return s * p * unit;
  }

  /* ---- memory over time ---- */
  function drawChart() {
    var H = 300, L = 84, R = 24, T = 26, B = 34, pw = W - L - R, ph = H - T - B;
    var pts = D.timeline.map(function (s) { return { t: s[0], b: s[1], k: s[2], kind: 'sample' }; });
    var pk = D.peak;
    /* The peak between two samples is a point of the curve too. */
    if (pk.bytes > 0 && !pts.some(function (p) { return p.b === pk.bytes && Math.abs(p.t - pk.seconds) < 1e-6; })) {
      var at = 0;
      while (at < pts.length && pts[at].t < pk.seconds) at++;
      pts.splice(at, 0, { t: pk.seconds, b: pk.bytes, k: pk.blocks, kind: 'peak' });
    }
    var last = pts.length ? pts[pts.length - 1] : null;
    if (!last || D.now > last.t + 1e-6 || last.b !== D.heap.in_use_bytes)
      pts.push({ t: Math.max(D.now, last ? last.t : 0), b: D.heap.in_use_bytes, k: D.heap.in_use_blocks, kind: 'now' });
    if (pts[0].t > 0) pts.unshift({ t: 0, b: 0, k: 0, kind: 'start' });
    /* Where the RSS went (a recording's samples of it): a line above the
     * heap's, on the same scale; its parts in the hover's figures. */
    var rss = (D.rss || []).map(function (r) { return { t: r[0], v: r[1], parts: r.slice(2) }; });

    var tmax = Math.max(pts[pts.length - 1].t, rss.length ? rss[rss.length - 1].t : 0, 1e-3);
    var bmax = Math.max.apply(null, pts.map(function (p) { return p.b; })
      .concat(rss.map(function (r) { return r.v; }), [pk.bytes, 1]));
    var unit = bmax >= 1048576 ? 1048576 : bmax >= 1024 ? 1024 : 1;
    var ys = step(bmax, 5, unit), ymax = Math.ceil(bmax / ys) * ys;
    var xs = step(tmax, 10, 1);
    function X(t) { return L + t / tmax * pw; }
    function Y(b) { return T + ph - b / ymax * ph; }

    clear(chart);
    chart.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
    chart.setAttribute('data-ymax', ymax);
    chart.setAttribute('data-tmax', tmax);
    chart.setAttribute('data-plot', [L, T, pw, ph].join(' '));
    for (var y = 0; y <= ymax + ys / 2; y += ys) {
      el('line', { x1: L, x2: L + pw, y1: Y(y), y2: Y(y), 'class': 'grid' }, chart);
      el('text', { x: L - 6, y: Y(y) + 4, 'text-anchor': 'end', 'class': 'axis' }, chart,
         unit === 1 ? String(y) : human(y));
    }
    for (var x = 0; x <= tmax + xs / 100; x += xs)
      el('text', { x: X(x), y: T + ph + 16, 'text-anchor': 'middle', 'class': 'axis' }, chart,
         +x.toFixed(6) + ' s');
    el('text', { x: L + pw, y: T + ph + 30, 'text-anchor': 'end', 'class': 'axis' }, chart, 'time since the trace began');
    el('text', { x: L, y: T - 10, 'class': 'axis' }, chart, 'heap in use');
    if (rss.length) {
      chart.setAttribute('aria-label', 'heap in use and RSS over time');
      el('text', { x: L + 90, y: T - 10, 'class': 'axis rss-legend' }, chart, 'RSS (resident, from smaps)');
    }

    var line = pts.map(function (p) { return X(p.t).toFixed(2) + ',' + Y(p.b).toFixed(2); });
    el('polygon', { points: X(0).toFixed(2) + ',' + Y(0) + ' ' + line.join(' ') + ' ' +
                    X(pts[pts.length - 1].t).toFixed(2) + ',' + Y(0), 'class': 'area' }, chart);
    el('polyline', { id: 'mt-chart-line', points: line.join(' '), 'class': 'curve',
                     'data-points': pts.length }, chart);
    if (rss.length)
      el('polyline', { id: 'mt-chart-rss', 'class': 'rss-curve', 'data-points': rss.length,
                       points: rss.map(function (r) { return X(r.t).toFixed(2) + ',' + Y(r.v).toFixed(2); }).join(' '),
                       'data-values': rss.map(function (r) { return r.v; }).join(','),
                       'data-seconds': rss.map(function (r) { return r.t; }).join(',') }, chart);
    var end = pts[pts.length - 1];
    el('circle', { id: 'mt-chart-last', cx: X(end.t), cy: Y(end.b), r: 3, fill: '#2f6fdb',
                   'data-bytes': end.b, 'data-seconds': end.t }, chart);
    if (pk.bytes > 0) {
      var px = X(pk.seconds), py = Y(pk.bytes);
      el('circle', { id: 'mt-chart-peak', cx: px, cy: py, r: 4.5, 'class': 'peak-dot',
                     'data-bytes': pk.bytes, 'data-seconds': pk.seconds }, chart);
      var right = px < L + pw * 0.6;
      el('text', { id: 'mt-chart-peak-label', x: px + (right ? 8 : -8), y: Math.max(py - 8, T + 10),
                   'text-anchor': right ? 'start' : 'end', 'class': 'peak-label' }, chart,
         'peak ' + human(pk.bytes) + ' (' + pk.bytes + ' bytes) at ' + secs(pk.seconds));
    }

    /* Hover: the nearest point's figures. */
    var hover = el('line', { y1: T, y2: T + ph, 'class': 'hover', visibility: 'hidden' }, chart);
    var tip = el('text', { 'class': 'tip', visibility: 'hidden' }, chart);
    var rtip = el('text', { 'class': 'tip', visibility: 'hidden' }, chart);
    var PARTS = ['live heap', 'allocator holds', 'program mmaps', 'thread stacks', 'modules',
                 'shared memory', 'rest'];
    chart.addEventListener('mousemove', function (ev) {
      var m = chart.getScreenCTM();
      if (!m) return;
      var p = chart.createSVGPoint();
      p.x = ev.clientX; p.y = ev.clientY;
      var t = (p.matrixTransform(m.inverse()).x - L) / pw * tmax, best = pts[0];
      pts.forEach(function (q) { if (Math.abs(q.t - t) < Math.abs(best.t - t)) best = q; });
      var bx = X(best.t);
      hover.setAttribute('x1', bx); hover.setAttribute('x2', bx);
      hover.setAttribute('visibility', 'visible');
      tip.textContent = secs(best.t) + ': ' + human(best.b) + ' (' + group(best.b) + ' bytes) in ' +
        group(best.k) + ' blocks' + (best.kind === 'peak' ? ', the peak' : '');
      tip.setAttribute('x', bx < L + pw / 2 ? bx + 6 : bx - 6);
      tip.setAttribute('text-anchor', bx < L + pw / 2 ? 'start' : 'end');
      tip.setAttribute('y', T + 12);
      tip.setAttribute('visibility', 'visible');
      if (!rss.length) return;
      var r = rss[0];
      rss.forEach(function (q) { if (Math.abs(q.t - t) < Math.abs(r.t - t)) r = q; });
      rtip.textContent = 'RSS at ' + secs(r.t) + ': ' + human(r.v) + ' (' +
        r.parts.map(function (v, i) { return PARTS[i] + ' ' + human(v); }).join(', ') + ')';
      rtip.setAttribute('x', tip.getAttribute('x'));
      rtip.setAttribute('text-anchor', tip.getAttribute('text-anchor'));
      rtip.setAttribute('y', T + 28);
      rtip.setAttribute('visibility', 'visible');
    });
    chart.addEventListener('mouseleave', function () {
      hover.setAttribute('visibility', 'hidden'); tip.setAttribute('visibility', 'hidden');
      rtip.setAttribute('visibility', 'hidden');
    });
    var n = D.timeline.length;
    document.getElementById('mt-chart-note').textContent = n ?
      n + ' samples of the heap in use, at least ' + D.interval * 1000 + ' ms apart, and the peak' +
      (rss.length ? '; above it, ' + rss.length + ' samples of the RSS and where it went' : '') +
      '; hover for the figures.' :
      'No samples were taken: the chart joins the start, the peak and the end.';
  }

  /* ---- flame graph ---- */
  /* Per stack: [bytes in use, blocks in use, allocs, bytes allocated,
   * bytes at the peak, temporary, [frames, outermost first]]. */
  var MODES = [
    { v: 0, key: 'inuse', name: 'bytes in use', unit: 'bytes', bytes: true },
    { v: 1, key: 'blocks', name: 'blocks in use', unit: 'blocks' },
    { v: 2, key: 'allocs', name: 'allocations', unit: 'allocations' },
    { v: 3, key: 'allocated', name: 'bytes allocated', unit: 'bytes', bytes: true },
    { v: 4, key: 'peak', name: 'at the peak', unit: 'bytes', bytes: true },
    { v: 5, key: 'temporary', name: 'temporary allocations', unit: 'allocations' }
  ];
  var ROW = 18;
  /* Children are kept in a Map by name: a frame may be named toString,
   * constructor or __proto__, which a plain object would take for its own. */
  var root = { name: 'all', v: [0, 0, 0, 0, 0, 0], kids: new Map(), parent: null, depth: 0 };
  D.stacks.forEach(function (s) {
    var node = root, i;
    for (i = 0; i < 6; i++) root.v[i] += s[i];
    s[6].forEach(function (idx) {
      var name = String(D.names[idx]);
      var k = node.kids.get(name);
      if (!k) {
        k = { name: name, v: [0, 0, 0, 0, 0, 0], kids: new Map(), parent: node,
              depth: node.depth + 1 };
        node.kids.set(name, k);
      }
      for (i = 0; i < 6; i++) k.v[i] += s[i];
      node = k;
    });
  });
  function hue(name) {
    var h = 0;
    for (var i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
    return h;
  }
  function color(mode, name) {
    var h = hue(name), base = [[120, 55, 62], [160, 45, 62], [30, 85, 62], [45, 85, 60],
                               [0, 70, 66], [270, 45, 70]][mode.v];
    return 'hsl(' + (base[0] + h % 24) + ',' + base[1] + '%,' + (base[2] + (h >> 5) % 12) + '%)';
  }
  var mode = MODES[0], focus = root;
  function kidsOf(n) {
    return Array.from(n.kids.keys()).sort().map(function (k) { return n.kids.get(k); });
  }
  function depthOf(n, m) {
    var d = n.depth;
    kidsOf(n).forEach(function (k) { if (k.v[m] > 0) d = Math.max(d, depthOf(k, m)); });
    return d;
  }
  function label(n) {
    var v = n.v[mode.v], tot = root.v[mode.v];
    return n.name + ': ' + group(v) + ' ' + mode.unit + (mode.bytes ? ' (' + human(v) + ')' : '') +
      ', ' + (tot ? (100 * v / tot).toFixed(2) : '0') + '%';
  }
  function drawFlame() {
    var m = mode.v, status = document.getElementById('mt-flame-status');
    clear(flame);
    if (!root.v[m]) {
      flame.setAttribute('viewBox', '0 0 ' + W + ' 30');
      el('text', { x: W / 2, y: 20, 'text-anchor': 'middle', 'class': 'axis' }, flame,
         'nothing to draw: no ' + mode.name);
      status.textContent = '';
      return;
    }
    var maxd = depthOf(root, m), H = (maxd + 1) * ROW + 4;
    flame.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
    flame.setAttribute('data-mode', mode.name);
    flame.setAttribute('data-total', root.v[m]);
    function box(n, x, w, ctx) {
      var y = H - (n.depth + 1) * ROW;
      var g = el('g', { 'class': ctx ? 'fr ctx' : 'fr', 'data-name': n.name, 'data-depth': n.depth,
                        'data-value': n.v[m] }, flame);
      if (n === root) g.setAttribute('id', 'mt-flame-root');
      el('title', {}, g, label(n));
      el('rect', { x: x.toFixed(3), y: y, width: w.toFixed(3), height: ROW - 1, rx: 2,
                   fill: n === root ? '#c9ced8' : color(mode, n.name) }, g);
      var fit = Math.floor((w - 6) / 6.7);
      if (fit >= 3)
        el('text', { x: (x + 3).toFixed(3), y: y + 12.5 }, g,
           n.name.length <= fit ? n.name : n.name.slice(0, fit - 1) + '…');
      g.addEventListener('click', function () { focus = n === focus ? (n.parent || root) : n; drawFlame(); });
      g.addEventListener('mouseenter', function () { status.textContent = label(n); });
    }
    /* The focus's ancestors span the width, dimmed; its subtree is scaled to it. */
    for (var a = focus.parent; a; a = a.parent) box(a, 0, W, true);
    /* Frames narrower than a tenth of a pixel are left out, with what
     * they hold (as flamegraph.pl's --minwidth does): zoom in to see them. */
    var scale = W / focus.v[m], hidden = 0;
    (function place(n, x) {
      box(n, x, n.v[m] * scale, false);
      kidsOf(n).forEach(function (k) {
        if (k.v[m] <= 0) return;
        if (k.v[m] * scale >= 0.1) place(k, x); else hidden++;
        x += k.v[m] * scale;
      });
    })(focus, 0);
    highlight();
    status.textContent = (focus === root ? '' : 'Zoomed in: click a dimmed frame or the same frame again to zoom out. ') +
      'All stacks: ' + label(root) + '. Hover for a frame\u2019s figures, click to zoom in.' +
      (hidden ? ' ' + hidden + ' frames narrower than 0.1 px are not drawn.' : '');
  }
  /* Highlight: frames whose name holds the text, and their share of the
   * measure (a frame inside a highlighted one is not counted twice). */
  var find = document.getElementById('mt-flame-find');
  function highlight() {
    var q = find.value.toLowerCase(), m = mode.v;
    Array.prototype.forEach.call(flame.querySelectorAll('g.fr'), function (g) {
      var on = q !== '' && g.getAttribute('data-name').toLowerCase().indexOf(q) >= 0;
      g.setAttribute('class', g.getAttribute('class').replace(/ hit$/, '') + (on ? ' hit' : ''));
    });
    var hit = 0;
    (function walk(n) {
      if (q !== '' && n !== root && n.name.toLowerCase().indexOf(q) >= 0) { hit += n.v[m]; return; }
      kidsOf(n).forEach(walk);
    })(root);
    document.getElementById('mt-flame-found').textContent = q === '' ? '' :
      'highlighted: ' + group(hit) + ' ' + mode.unit + ', ' +
      (root.v[m] ? (100 * hit / root.v[m]).toFixed(2) : '0') + '% of all';
  }
  find.addEventListener('input', highlight);
  var modes = document.getElementById('mt-flame-modes');
  MODES.forEach(function (md) {
    var b = document.createElement('button');
    b.type = 'button';
    b.textContent = md.name;
    b.setAttribute('data-mode', md.v);
    b.addEventListener('click', function () {
      mode = md; focus = root;
      try { history.replaceState(null, '', '#flame=' + md.key); } catch (e) { /* file: may refuse */ }
      Array.prototype.forEach.call(modes.children, function (c) { c.className = c === b ? 'on' : ''; });
      drawFlame();
    });
    modes.appendChild(b);
  });
  /* Start with the measure the address names (#flame=allocs), else bytes
   * in use, or when everything was freed, the peak. */
  mode = MODES[root.v[0] ? 0 : root.v[4] ? 4 : 2];
  var asked = /flame=(\w+)/.exec(location.hash);
  MODES.forEach(function (md) { if (asked && asked[1] === md.key) mode = md; });
  modes.children[MODES.indexOf(mode)].className = 'on';

  drawChart();
  drawFlame();
  document.body.setAttribute('data-drawn', 'yes');
})();
