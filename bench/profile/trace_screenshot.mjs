// Screenshot of a Chrome trace in the Catapult trace viewer (chrome://tracing's
// viewer), with one slice selected so that its figures show.
//
// The viewer page comes from Catapult's tracing/bin/trace2html; Chromium runs
// under Xvfb with --remote-debugging-port=9222 (Debian's chromium and xvfb):
//
//   python3 catapult/tracing/bin/trace2html gpt2_trace.json --output=/tmp/trace.html
//   Xvfb :99 & DISPLAY=:99 chromium --no-sandbox --remote-debugging-port=9222 &
//   node --experimental-websocket trace_screenshot.mjs file:///tmp/trace.html out.png X Y
//
// X, Y: where to click (the slice to select), in page pixels of a 1600x1250 view.
import { writeFileSync } from 'fs';

const [url, out, x, y] = process.argv.slice(2);
const pages = await (await fetch('http://localhost:9222/json')).json();
const ws = new WebSocket(pages.find((p) => p.type === 'page').webSocketDebuggerUrl);
await new Promise((ok, bad) => { ws.onopen = ok; ws.onerror = bad; });
let id = 0;
const waiting = new Map();
ws.onmessage = (m) => {
  const msg = JSON.parse(m.data);
  if (waiting.has(msg.id)) { waiting.get(msg.id)(msg); waiting.delete(msg.id); }
};
const send = (method, params = {}) => new Promise((ok) => {
  waiting.set(++id, ok);
  ws.send(JSON.stringify({ id, method, params }));
});
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

await send('Emulation.setDeviceMetricsOverride', { width: 1600, height: 1250, deviceScaleFactor: 1, mobile: false });
await send('Page.navigate', { url });
await sleep(8000); // the viewer imports a few MB of scripts, then the trace
for (const type of ['mousePressed', 'mouseReleased'])
  await send('Input.dispatchMouseEvent', { type, x: Number(x), y: Number(y), button: 'left', clickCount: 1 });
await sleep(1500);
const shot = await send('Page.captureScreenshot', { format: 'png' });
writeFileSync(out, Buffer.from(shot.result.data, 'base64'));
ws.close();
