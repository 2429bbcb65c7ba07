#!/usr/bin/env python3
"""Checks memtrace's HTML report as Chromium drew it (report_html_chromium.sh).

    report_html_check.py page PAGE JSON FOLDED DOM_INUSE DOM_ALLOCS DOM_PEAK
    report_html_check.py oracle DOM_INUSE FOLDED ORACLE_SVG

page: the figures drawn in the DOM (chart, flame graph in three measures,
cards, tables) against the JSON report and the folded stacks of the same
deterministic program, and the page's escaping.
oracle: the flame graph's frames against those that the npm package
flamegraph draws from the same folded stacks.
"""
import html.parser
import json
import re
import sys

W = 1200


def fail(msg):
    sys.exit('report_html_check: ' + msg)


class Dom(html.parser.HTMLParser):
    """Elements by id, the flame graph's frames in document order, texts."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.by_id, self.frames, self.stack = {}, [], []
        self.text_of = {}
        self.body = {}
        self._text_id = None
        self._g = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == 'body':
            self.body = a
        if 'id' in a:
            self.by_id[a['id']] = a
        if tag == 'g' and 'fr' in a.get('class', '').split():
            self._g = dict(a, title='')
            self.frames.append(self._g)
        elif tag == 'rect' and self._g is not None and 'x' not in self._g:
            self._g['x'], self._g['width'] = float(a['x']), float(a['width'])
        elif tag == 'title' and self._g is not None:
            self._text_id = ('title', self._g)
        elif 'id' in a:
            self._text_id = ('id', a['id'])

    def handle_endtag(self, tag):
        if tag == 'g':
            self._g = None
        if tag in ('title', 'text', 'p', 'div', 'td'):
            self._text_id = None

    def handle_data(self, data):
        if not self._text_id:
            return
        kind, key = self._text_id
        if kind == 'title':
            key['title'] += data
        else:
            self.text_of[key] = self.text_of.get(key, '') + data


def folded_name(name):
    """A frame name as the folded report writes it (report_folded.c)."""
    if not name:
        return '[unknown]'
    out = []
    for c in name:
        if c == ';':
            c = ':'
        elif c in ' \t':
            c = '_'
        elif ord(c) < 0x20 or ord(c) == 0x7f:
            c = '?'
        out.append(c)
    return ''.join(out)


def tree_of_stacks(stacks):
    """{path (outermost first): value} summed over stacks of (frames, value)."""
    t = {}
    for frames, v in stacks:
        for i in range(1, len(frames) + 1):
            t[tuple(frames[:i])] = t.get(tuple(frames[:i]), 0) + v
    return {k: v for k, v in t.items() if v}


def folded_stacks(path):
    out = []
    for line in open(path):
        stack, _, n = line.rstrip('\n').rpartition(' ')
        out.append((stack.split(';'), int(n)))
    return out


def dom_tree(dom, rename=lambda n: n):
    """The flame graph's frames as {path: value}, each frame's geometry
    checked on the way: width = value / total x W, children side by side
    from their parent's left edge."""
    fr = dom.frames
    if not fr or fr[0].get('id') != 'mt-flame-root':
        fail('the flame graph has no root frame')
    total = int(fr[0]['data-value'])
    if abs(fr[0]['x']) > 0.001 or abs(fr[0]['width'] - W) > 0.001:
        fail('the root frame does not span the width')
    # path: names of the frames at depths 1..d; edge[k]: where the next
    # child of the frame at depth k starts (the previous sibling's right edge).
    t, path, edge = {}, [], [0.0]
    for g in fr[1:]:
        d, v = int(g['data-depth']), int(g['data-value'])
        if v <= 0:
            fail('a frame of value %d was drawn: %r' % (v, g))
        want_w = v / total * W
        if abs(g['width'] - want_w) > 0.002:
            fail('frame %r: width %.3f, %d of %d is %.3f' % (g['data-name'], g['width'], v, total, want_w))
        del path[d - 1:]
        del edge[d:]
        if len(edge) != d:
            fail('frame %r at depth %d has no parent' % (g['data-name'], d))
        left = edge[d - 1]
        if abs(g['x'] - left) > 0.01:
            fail('frame %r at x %.3f, expected %.3f' % (g['data-name'], g['x'], left))
        edge[d - 1] = left + g['width']
        edge.append(g['x'])
        path.append(rename(g['data-name']))
        t[tuple(path)] = t.get(tuple(path), 0) + v
    return total, t


def label(f):
    """A JSON frame's name as the page names it (report_html_frame_label)."""
    if f['function']:
        return f['function']
    if f['module']:
        return '%s+0x%x' % (f['module'].rsplit('/', 1)[-1] or f['module'], int(f['offset'], 16))
    return '0x%x' % int(f['pc'], 16)


def check_page(page_path, json_path, folded_path, dom_inuse, dom_allocs, dom_peak):
    r = json.load(open(json_path))
    raw = open(page_path, encoding='utf-8').read()
    heap, peak = r['heap'], r['peak']

    # Nothing the page could load; names escaped in markup and in the data.
    for bad in ('http://', 'https://', 'src=', 'href=', 'url(', '@import', '<link', '<img',
                '<iframe', 'fetch(', 'XMLHttpRequest', '//cdn'):
        if bad in raw:
            fail('the page holds %r' % bad)
    if 'Pool<int' in raw or 'Bits const&)' in raw:
        fail('a C++ name is not escaped in the page')
    for want in ('Pool&lt;int, 1024&gt;::grab()', 'Bits::operator&amp;(Bits const&amp;) const',
                 'Pool\\u003cint, 1024\\u003e::grab()'):
        if want not in raw:
            fail('the page lacks %r' % want)
    if raw.count('<script') != 2:
        fail('the page has %d script elements, not 2' % raw.count('<script'))

    dom = Dom(open(dom_inuse, encoding='utf-8').read())
    if dom.body.get('data-drawn') != 'yes':
        fail('the script did not finish drawing')

    # The cards and tables (written by memtrace, not by the script).
    ids = dom.by_id
    for card, want in (('card-inuse', heap['in_use_bytes']), ('card-peak', peak['bytes']),
                       ('card-allocs', heap['allocs']), ('card-allocated', heap['bytes_allocated']),
                       ('card-temporary', heap['temporary'])):
        got = re.search(r'data-value="(\d+)"', raw[raw.index('id="%s"' % card):]).group(1)
        if int(got) != want:
            fail('card %s shows %s, the JSON report %d' % (card, got, want))
    if int(ids['mt-peak']['data-bytes']) != peak['bytes']:
        fail('the peak section says %s bytes, the JSON report %d' % (ids['mt-peak']['data-bytes'], peak['bytes']))
    top = re.search(r'<section id="top">(.*?)</section>', raw, re.S).group(1)
    rows = [int(v) for v in re.findall(r'<tr><td class="num" data-value="(\d+)"', top)]
    if rows != [s['bytes'] for s in r['stacks']][:len(rows)] or not rows:
        fail('top stacks %s, the JSON report %s' % (rows, [s['bytes'] for s in r['stacks']]))
    leaks = r.get('leaks')
    if leaks:
        m = re.search(r'<th>definitely lost</th><td class="num" data-bytes="(\d+)"', raw)
        if not m or int(m.group(1)) != leaks['definitely_lost_bytes']:
            fail('definitely lost: page %s, JSON %d' % (m and m.group(1), leaks['definitely_lost_bytes']))
    elif 'id="leaks"' in raw:
        fail('a leak section without a scan')

    # The chart: the peak drawn where the report's peak is, the highest
    # point; the curve ends at the bytes in use at the end.
    chart = ids.get('mt-chart', {})
    L, T, pw, ph = (float(x) for x in chart['data-plot'].split())
    ymax, tmax = float(chart['data-ymax']), float(chart['data-tmax'])
    pk = ids['mt-chart-peak']
    if int(pk['data-bytes']) != peak['bytes']:
        fail('chart peak %s, JSON %d' % (pk['data-bytes'], peak['bytes']))
    if abs(float(pk['cy']) - (T + ph - peak['bytes'] / ymax * ph)) > 0.01 or ymax < peak['bytes']:
        fail('the peak dot is at y %s, not at %d bytes' % (pk['cy'], peak['bytes']))
    # Times differ from run to run: the page's own (its data) are drawn.
    data = json.loads(re.search(r'<script id="mt-data" type="application/json">(.*?)</script>', raw, re.S).group(1))
    if abs(float(pk['cx']) - (L + data['peak']['seconds'] / tmax * pw)) > 0.01:
        fail('the peak dot is at x %s, not at %.6f s' % (pk['cx'], data['peak']['seconds']))
    # The program sleeps 8 x 40 ms before its peak.
    if min(data['peak']['seconds'], peak['seconds']) < 0.32:
        fail('the peak came at %.3f s (%.3f s in the JSON run), before 0.32 s' %
             (data['peak']['seconds'], peak['seconds']))
    lab = dom.text_of.get('mt-chart-peak-label', '')
    if '(%d bytes)' % peak['bytes'] not in lab:
        fail('peak label %r lacks %d bytes' % (lab, peak['bytes']))
    pts = [tuple(map(float, p.split(','))) for p in ids['mt-chart-line']['points'].split()]
    if len(pts) < 4:
        fail('the curve has %d points' % len(pts))
    if abs(min(y for _, y in pts) - float(pk['cy'])) > 0.01:
        fail('the peak is not the curve\'s highest point')
    if any(b[0] < a[0] - 1e-9 for a, b in zip(pts, pts[1:])):
        fail('the curve goes back in time')
    last = ids['mt-chart-last']
    if int(last['data-bytes']) != heap['in_use_bytes']:
        fail('the curve ends at %s bytes, the report %d' % (last['data-bytes'], heap['in_use_bytes']))
    if abs(pts[-1][1] - (T + ph - heap['in_use_bytes'] / ymax * ph)) > 0.02:
        fail('the curve\'s last point is not at the bytes in use')

    # The flame graph of bytes in use, frame by frame, against the folded stacks.
    total, tree = dom_tree(dom, folded_name)
    if total != heap['in_use_bytes']:
        fail('flame graph root %d, JSON in use %d' % (total, heap['in_use_bytes']))
    if ids['mt-flame-root'] and 'all: {:,} bytes'.format(total) not in dom.frames[0]['title']:
        fail('root title %r' % dom.frames[0]['title'])
    want = tree_of_stacks(folded_stacks(folded_path))
    if tree != want:
        fail('flame graph frames differ from the folded stacks:\n page   %s\n folded %s' %
             (sorted(set(tree.items()) - set(want.items())), sorted(set(want.items()) - set(tree.items()))))
    names = {g['data-name'] for g in dom.frames}
    for n in ('Pool<int, 1024>::grab()', 'Bits::operator&(Bits const&) const', 'main'):
        if n not in names:
            fail('no frame %r in the flame graph' % n)

    # The other measures: their totals, and at the peak every frame.
    for path, mode, want_total in ((dom_allocs, 'allocations', heap['allocs']),
                                   (dom_peak, 'at the peak', peak['bytes'])):
        d = Dom(open(path, encoding='utf-8').read())
        if d.by_id['mt-flame'].get('data-mode') != mode:
            fail('the address did not switch the flame graph to %s' % mode)
        t, tr = dom_tree(d)
        if t != want_total:
            fail('flame graph of %s: %d, the JSON report %d' % (mode, t, want_total))
        if mode == 'at the peak':
            want = tree_of_stacks([([label(f) for f in reversed(s['frames'])], s['bytes'])
                                   for s in peak['stacks']])
            if tr != want:
                fail('flame graph at the peak differs from the JSON peak stacks')
        print('flame graph of %s: %d, %d frames' % (mode, t, len(tr)))
    print('page: peak %d bytes at %.3f s, %d points, in use %d bytes, %d frames, top %s' %
          (peak['bytes'], peak['seconds'], len(pts), total, len(tree), rows))


class OracleSvg(html.parser.HTMLParser):
    """The frames of flamegraph's SVG: name (title), x, width, y."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.frames, self.height, self._g, self._title = [], None, None, False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == 'svg':
            self.height = float(a['height'])
        elif tag == 'g' and 'func_g' in a.get('class', ''):
            self._g = {'title': ''}
            self.frames.append(self._g)
        elif tag == 'title' and self._g is not None:
            self._title = True
        elif tag == 'rect' and self._g is not None:
            self._g.update(x=float(a['x']), width=float(a['width']), y=float(a['y']))

    def handle_endtag(self, tag):
        if tag == 'title':
            self._title = False
        elif tag == 'g':
            self._g = None

    def handle_data(self, data):
        if self._title and self._g is not None:
            self._g['title'] += data


def check_oracle(dom_inuse, folded_path, svg_path):
    """flamegraph: 1200 px with 10 px of margin each side, frames 16 px
    high above 34 px of labels, x and width rounded to 0.1 px."""
    dom = Dom(open(dom_inuse, encoding='utf-8').read())
    ours = {}
    for g in dom.frames:
        name = 'all' if g.get('id') == 'mt-flame-root' else folded_name(g['data-name'])
        ours.setdefault((int(g['data-depth']), name), []).append((g['x'] / W, g['width'] / W))
    svg = OracleSvg(open(svg_path, encoding='utf-8').read())
    span, n = W - 20, 0
    if len(svg.frames) != len(dom.frames):
        fail('flamegraph drew %d frames, the page %d' % (len(svg.frames), len(dom.frames)))
    for f in svg.frames:
        name = re.sub(r' \([\d,.]+ bytes(, 100%)?\)(, [\d.]+%\))?$', '', f['title'])
        depth = round((svg.height - 34 + 1 - f['y']) / 16) - 1
        x, w = (f['x'] - 10) / span, f['width'] / span
        cands = ours.get((depth, name), [])
        best = min(cands, key=lambda c: abs(c[0] - x), default=None)
        if best is None:
            fail('flamegraph has %r at depth %d, the page does not' % (name, depth))
        if abs(best[0] - x) > 0.11 / span or abs(best[1] - w) > 0.21 / span:
            fail('%r at depth %d: page x %.5f w %.5f, flamegraph x %.5f w %.5f (of the width)' %
                 (name, depth, best[0], best[1], x, w))
        n += 1
    print('flamegraph (npm): %d frames, each at the same place and width (within its 0.1 px rounding)' % n)


if __name__ == '__main__':
    if sys.argv[1] == 'page' and len(sys.argv) == 8:
        check_page(*sys.argv[2:])
    elif sys.argv[1] == 'oracle' and len(sys.argv) == 5:
        check_oracle(*sys.argv[2:])
    else:
        fail('usage: see the docstring')
