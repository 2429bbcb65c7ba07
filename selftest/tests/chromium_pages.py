#!/usr/bin/env python3
"""One headless Chromium for several pages, driven over the DevTools
protocol on a pipe (--remote-debugging-pipe: Chromium reads commands on fd
3 and writes answers on fd 4, each a JSON text ended by a NUL).

    chromium_pages.py PROFILE_DIR JOB...

A JOB is dom:URL:OUT (the DOM as HTML once the page's body says
data-drawn="yes", or its load ended if it never does), shot:URL:OUT:WxH (a
PNG screenshot of that viewport), requests:URL:OUT (the URL of every
request the page began, one a line, blocked ones included) or
find:URL:TEXT:OUT (TEXT typed into the flame graph's highlight box: the
DOM then) or watch:URL:OUT (a JSON object: the page's "title", "drawn"
(its data-drawn), "console" (every console call, as type and text),
"exceptions" (every uncaught one, as text), "log" (the browser's own
entries, CSP refusals among them, as source, level and text) and "dom").
Every job has
a tab of its own.  Run it inside a network namespace of its own."""
import base64
import json
import os
import subprocess
import sys
import time

LIMIT = 60.0


class Browser:
    def __init__(self, profile):
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()

        def fds():
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        self.proc = subprocess.Popen(
            ['chromium', '--headless', '--no-sandbox', '--disable-gpu', '--user-data-dir=' + profile,
             '--no-first-run', '--disable-background-networking', '--disable-component-update',
             '--disable-sync', '--disable-default-apps', '--disable-extensions', '--hide-scrollbars',
             '--remote-debugging-pipe', 'about:blank'],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(profile + '/chromium.log', 'w'),
            preexec_fn=fds, pass_fds=(3, 4))
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buf, self.next_id, self.events = b'', 0, []

    def _read(self, deadline):
        while b'\0' not in self.buf:
            if time.monotonic() > deadline:
                raise TimeoutError('chromium did not answer')
            chunk = os.read(self.from_chrome, 65536)
            if not chunk:
                raise EOFError('chromium closed its pipe')
            self.buf += chunk
        msg, _, self.buf = self.buf.partition(b'\0')
        return json.loads(msg)

    def call(self, method, params=None, session=None):
        self.next_id += 1
        msg = {'id': self.next_id, 'method': method, 'params': params or {}}
        if session:
            msg['sessionId'] = session
        os.write(self.to_chrome, json.dumps(msg).encode() + b'\0')
        deadline = time.monotonic() + LIMIT
        while True:
            m = self._read(deadline)
            if m.get('id') == self.next_id:
                if 'error' in m:
                    raise RuntimeError('%s: %s' % (method, m['error']))
                return m.get('result', {})
            self.events.append(m)

    def wait_event(self, method, session, deadline):
        while True:
            for i, e in enumerate(self.events):
                if e.get('method') == method and e.get('sessionId') == session:
                    return self.events.pop(i)
            self.events.append(self._read(deadline))

    def open(self, url, width=1280, height=1600, network=False, watch=False):
        target = self.call('Target.createTarget', {'url': 'about:blank'})['targetId']
        s = self.call('Target.attachToTarget', {'targetId': target, 'flatten': True})['sessionId']
        self.call('Page.enable', session=s)
        if network:
            self.call('Network.enable', session=s)
        if watch:
            self.call('Runtime.enable', session=s)
            self.call('Log.enable', session=s)
        self.call('Emulation.setDeviceMetricsOverride',
                  {'width': width, 'height': height, 'deviceScaleFactor': 1, 'mobile': False}, s)
        self.call('Page.navigate', {'url': url}, s)
        deadline = time.monotonic() + LIMIT
        self.wait_event('Page.loadEventFired', s, deadline)
        # The report's script says when it has drawn; other pages are done at load.
        while time.monotonic() < deadline:
            r = self.call('Runtime.evaluate', {'expression': "document.body && document.body.getAttribute('data-drawn')",
                                               'returnByValue': True}, s)
            if r['result'].get('value') == 'yes':
                break
            if 'mt-data' not in self.dom(s):
                break
            # A script that threw will not draw: no use waiting for it.
            if watch and any(e.get('sessionId') == s and e.get('method') == 'Runtime.exceptionThrown'
                             for e in self.events):
                break
            time.sleep(0.05)
        return s

    def dom(self, s):
        return self.call('Runtime.evaluate', {'expression': 'document.documentElement.outerHTML',
                                              'returnByValue': True}, s)['result']['value']

    def close(self):
        try:
            self.call('Browser.close')
        except (EOFError, RuntimeError, TimeoutError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def main():
    profile, jobs = sys.argv[1], sys.argv[2:]
    b = Browser(profile)
    try:
        for job in jobs:
            kind, rest = job.split(':', 1)
            if kind == 'dom':
                url, out = rest.rsplit(':', 1)
                open(out, 'w', encoding='utf-8').write(b.dom(b.open(url)))
            elif kind == 'shot':
                url, out, size = rest.rsplit(':', 2)
                w, h = (int(x) for x in size.split('x'))
                s = b.open(url, w, h)
                png = b.call('Page.captureScreenshot', {'format': 'png'}, s)['data']
                open(out, 'wb').write(base64.b64decode(png))
            elif kind == 'find':
                url, text, out = rest.rsplit(':', 2)
                s = b.open(url)
                typed = ("var f = document.getElementById('mt-flame-find'); f.value = %s; "
                         "f.dispatchEvent(new Event('input'));" % json.dumps(text))
                r = b.call('Runtime.evaluate', {'expression': typed}, s)
                if 'exceptionDetails' in r:
                    sys.exit('chromium_pages: typing failed: %s' % r['exceptionDetails'])
                open(out, 'w', encoding='utf-8').write(b.dom(s))
            elif kind == 'watch':
                url, out = rest.rsplit(':', 1)
                s = b.open(url, watch=True)
                time.sleep(0.2)
                page = b.call('Runtime.evaluate', {'expression': "[document.title, document.body && "
                                                                 "document.body.getAttribute('data-drawn')]",
                                                   'returnByValue': True}, s)['result']['value']
                mine = [e for e in b.events if e.get('sessionId') == s]
                def text_of(args):
                    return ' '.join(str(a.get('value', a.get('description', ''))) for a in args)
                json.dump({'title': page[0], 'drawn': page[1],
                           'console': [{'type': e['params']['type'], 'text': text_of(e['params']['args'])}
                                       for e in mine if e.get('method') == 'Runtime.consoleAPICalled'],
                           'exceptions': [json.dumps(e['params']['exceptionDetails'])
                                          for e in mine if e.get('method') == 'Runtime.exceptionThrown'],
                           'log': [{'source': e['params']['entry']['source'], 'level': e['params']['entry']['level'],
                                    'text': e['params']['entry']['text']}
                                   for e in mine if e.get('method') == 'Log.entryAdded'],
                           'dom': b.dom(s)}, open(out, 'w'))
            elif kind == 'requests':
                url, out = rest.rsplit(':', 1)
                s = b.open(url, network=True)
                time.sleep(0.2)
                b.call('Runtime.evaluate', {'expression': '1'}, s)  # takes in the events so far
                urls = [e['params']['request']['url'] for e in b.events
                        if e.get('sessionId') == s and e.get('method') == 'Network.requestWillBeSent']
                open(out, 'w').write(''.join(u + '\n' for u in urls))
            else:
                sys.exit('chromium_pages: unknown job ' + job)
    finally:
        b.close()


if __name__ == '__main__':
    main()
