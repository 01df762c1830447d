// Reads an MCAP file with @mcap/core, as Foxglove does: the indexed reader (summary, chunk
// indexes, seeking) and the stream reader (record by record). Prints JSON: for each reader the
// message count per topic, the time range, and the schema of each channel, or its error.
//   node mcap_read.js FILE
const fs = require("fs");
const { McapIndexedReader, McapStreamReader } = require("@mcap/core");
const { loadDecompressHandlers } = require("@mcap/support");

async function indexed(path, decompressHandlers) {
  const handle = await fs.promises.open(path, "r");
  const size = BigInt((await handle.stat()).size);
  const readable = {
    size: async () => size,
    read: async (offset, length) => {
      const buffer = Buffer.alloc(Number(length));
      await handle.read(buffer, 0, Number(length), Number(offset));
      return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    },
  };
  try {
    const reader = await McapIndexedReader.Initialize({ readable, decompressHandlers });
    const counts = {};
    let first = null;
    let last = null;
    for await (const message of reader.readMessages()) {
      const topic = reader.channelsById.get(message.channelId).topic;
      counts[topic] = (counts[topic] ?? 0) + 1;
      const t = message.logTime;
      if (first === null || t < first) first = t;
      if (last === null || t > last) last = t;
    }
    const schemas = {};
    for (const channel of reader.channelsById.values()) {
      schemas[channel.topic] = reader.schemasById.get(channel.schemaId)?.name ?? null;
    }
    return { counts, first: String(first), last: String(last), schemas, profile: reader.header.profile };
  } catch (error) {
    return { error: String(error && error.message ? error.message : error) };
  } finally {
    await handle.close();
  }
}

function streamed(path, decompressHandlers) {
  const reader = new McapStreamReader({ decompressHandlers });
  const channels = new Map();
  const counts = {};
  let done = false;
  try {
    reader.append(new Uint8Array(fs.readFileSync(path)));
    for (let record; (record = reader.nextRecord()); ) {
      if (record.type === "Channel") channels.set(record.id, record.topic);
      if (record.type === "Message") {
        const topic = channels.get(record.channelId);
        counts[topic] = (counts[topic] ?? 0) + 1;
      }
    }
    done = reader.done();
    return { counts, complete: done };
  } catch (error) {
    return { counts, error: String(error && error.message ? error.message : error) };
  }
}

(async () => {
  const decompressHandlers = await loadDecompressHandlers();
  const path = process.argv[2];
  const result = { indexed: await indexed(path, decompressHandlers), streamed: streamed(path, decompressHandlers) };
  process.stdout.write(JSON.stringify(result) + "\n", () => process.exit(0));
})();
