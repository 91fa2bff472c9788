// warcio_check.mjs — read a WARC file with webrecorder's warcio.js, the independent
// reader of the --warc tests (tests/scenarios/scenarios.c, test_warc), and print one
// JSON line per record: what warcio.js parsed, and the SHA-1 (base32) of the payload
// as warcio.js decodes it (chunking and Content-Encoding undone).
//
//   node warcio_check.mjs WARCIO_BIN FILE.warc[.gz]
//
// WARCIO_BIN is the `warcio` command (its package is found from it).
import { createHash } from "node:crypto";
import { createReadStream, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

const [bin, file] = process.argv.slice(2);
const root = dirname(dirname(realpathSync(bin)));   // .../warcio/dist/cli.js -> .../warcio
const { WARCParser } = await import(pathToFileURL(join(root, "dist", "index.js")).href);

const abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
function base32(bytes) {
  let out = "", buf = 0, bits = 0;
  for (const b of bytes) {
    buf = (buf << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += abc[(buf >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buf &= 0xff;
  }
  if (bits > 0) out += abc[(buf << (5 - bits)) & 31];
  return out;
}
const sha1 = (data) => "sha1:" + base32(createHash("sha1").update(data).digest());

const parser = new WARCParser(createReadStream(file));
for await (const record of parser) {

  const out = {
    type: record.warcType,
    uri: record.warcTargetURI ?? null,
    id: record.warcHeader("WARC-Record-ID"),
    concurrent: record.warcHeader("WARC-Concurrent-To") ?? null,
    payload_digest: record.warcHeader("WARC-Payload-Digest") ?? null,
    length: Number(record.warcHeader("Content-Length")),
    filename: record.warcHeader("WARC-Filename") ?? null,
  };
  if (record.warcType === "revisit") {      // what it refers to (test_recrawl)
    out.profile = record.warcHeader("WARC-Profile") ?? null;
    out.refers_to_uri = record.warcHeader("WARC-Refers-To-Target-URI") ?? null;
    out.refers_to_date = record.warcHeader("WARC-Refers-To-Date") ?? null;
  }
  if (record.warcType === "response" || record.warcType === "revisit")
    out.date = record.warcHeader("WARC-Date") ?? null;
  if (record.httpHeaders) {
    out.status = record.httpHeaders.statusCode ?? null;
    out.method = record.httpHeaders.method ?? null;
  }
  if (record.warcType === "response") {
    const body = await record.readFully(true);
    out.decoded_sha1 = sha1(body);
    out.decoded_len = body.length;
  }
  console.log(JSON.stringify(out));
}
