// Foxglove's own WebSocket protocol client (@foxglove/ws-protocol, on `ws`), behaving as the
// Foxglove and Lichtblick viewers do: it connects, then subscribes to the advertised channels
// one at a time, a little apart, and keeps what arrives. Prints JSON: per topic the messages
// received (time and base64 data; at most `keep` each), or {"error": ...} if it cannot connect.
//   node foxglove_client.js URL SUBPROTOCOL SECONDS [SUBSCRIBE_GAP_MS] [KEEP]
const { FoxgloveClient } = require("@foxglove/ws-protocol");
const WebSocket = require("ws");

const [url, subprotocol, seconds, gapArg, keepArg] = process.argv.slice(2);
const gap = Number(gapArg ?? 100);
const keep = Number(keepArg ?? 50);
const topics = {};
const byId = new Map();
const queue = [];
let subscribing = false;
let failure = null;

const ws = new WebSocket(url, [subprotocol]);
ws.on("unexpected-response", (_req, res) => {
  let body = "";
  res.on("data", (chunk) => (body += chunk));
  res.on("end", () => finish({ error: `HTTP ${res.statusCode}: ${body}` }, 3));
});
const client = new FoxgloveClient({ ws });

function subscribeNext() {
  if (queue.length === 0) {
    subscribing = false;
    return;
  }
  subscribing = true;
  const channel = queue.shift();
  const id = client.subscribe(channel.id);
  byId.set(id, channel.topic);
  topics[channel.topic] = topics[channel.topic] ?? { count: 0, messages: [] };
  setTimeout(subscribeNext, gap);
}

client.on("advertise", (channels) => {
  for (const channel of channels) queue.push(channel);
  if (!subscribing) setTimeout(subscribeNext, gap);
});
client.on("message", ({ subscriptionId, timestamp, data }) => {
  const topic = byId.get(subscriptionId);
  const entry = topics[topic];
  entry.count += 1;
  if (entry.messages.length < keep) {
    const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    entry.messages.push({ time: timestamp.toString(), data: bytes.toString("base64") });
  }
});
client.on("error", (error) => {
  failure = failure ?? String(error && error.message ? error.message : error);
});
client.on("close", () => {
  if (Object.keys(topics).length === 0) {
    setTimeout(() => finish({ error: failure ?? "closed" }, 3), 200);
  }
});

// Exit once the output is written (a pipe takes it in pieces; exiting at once cuts it).
function finish(result, code) {
  process.stdout.write(JSON.stringify(result) + "\n", () => process.exit(code));
}

setTimeout(() => finish({ topics }, 0), Number(seconds) * 1000);
