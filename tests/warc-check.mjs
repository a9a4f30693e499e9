// warc-check.mjs - warcio (the Webrecorder project's JavaScript WARC
// library) as an independent judge of sieve's WARC files.
//
// usage: node warc-check.mjs WARCIO_PREFIX [--index-only] OURS.cdxj FILE...
//
// For every file, warcio's parser must read every record; each record's
// block must match its WARC-Block-Digest and Content-Length, each HTTP
// record's payload (the block after its head) its WARC-Payload-Digest,
// with SHA-1 and base32 computed here; every file starts with a warcinfo
// record that the others name; each request is followed by the response
// it names in WARC-Concurrent-To, and warcio parses that response's HTTP
// head. Then `warcio cdx-index` of the files, sorted, must equal OURS.cdxj
// line for line. With --index-only, only that: for files another
// writer made, which need not follow sieve's own conventions. Prints what
// differs and exits 1 on any difference.
import { createReadStream, readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const args = process.argv.slice(2);
const prefix = args.shift();
const indexOnly = args[0] === "--index-only";
if (indexOnly) args.shift();
const [oursPath, ...files] = args;
const pkg = join(prefix, "node_modules", "warcio");
const { WARCParser } = await import(pathToFileURL(join(pkg, "dist", "index.js")).href);

let problems = 0;
function problem(msg) {
  problems++;
  if (problems <= 50) console.error(`warc-check: ${msg}`);
}

function base32(bytes) {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let out = "", acc = 0, bits = 0;
  for (const b of bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(acc >>> (bits - 5)) & 31];
      bits -= 5;
    }
    acc &= (1 << bits) - 1;
  }
  if (bits > 0) out += alphabet[(acc << (5 - bits)) & 31];
  return out;
}

const sha1 = (bytes) => "sha1:" + base32(createHash("sha1").update(bytes).digest());

function headEnd(block) {
  for (let i = 0; i + 3 < block.length; i++)
    if (block[i] === 13 && block[i + 1] === 10 && block[i + 2] === 13 && block[i + 3] === 10)
      return i + 4;
  return -1;
}

let records = 0;
for (const file of indexOnly ? [] : files) {
  // Pass 1: raw blocks and digests.
  let warcinfo = null, pending = null, n = 0;
  const parser = new WARCParser(createReadStream(file), { parseHttp: false });
  for await (const record of parser) {
    n++;
    const h = (name) => record.warcHeaders.headers.get(name);
    const type = h("WARC-Type"), id = h("WARC-Record-ID");
    const where = `${file} record ${n} (${type})`;
    const block = await record.readFully(false);
    if (Number(h("Content-Length")) !== block.length)
      problem(`${where}: Content-Length ${h("Content-Length")}, block ${block.length}`);
    if (h("WARC-Block-Digest") !== sha1(block))
      problem(`${where}: block digest ${h("WARC-Block-Digest")}, computed ${sha1(block)}`);
    if (h("WARC-Date") && !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/.test(h("WARC-Date")))
      problem(`${where}: WARC-Date ${h("WARC-Date")}`);
    if (!/^<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}>$/.test(id))
      problem(`${where}: WARC-Record-ID ${id}`);
    if (n === 1 && type !== "warcinfo") problem(`${where}: the first record is no warcinfo`);
    if (type === "warcinfo") {
      if (pending) problem(`${where}: a request without its response before it`);
      warcinfo = id;
      continue;
    }
    if (h("WARC-Warcinfo-ID") !== warcinfo) problem(`${where}: WARC-Warcinfo-ID`);
    const end = headEnd(block);
    if (end < 0) {
      problem(`${where}: no HTTP head`);
      continue;
    }
    if (h("WARC-Payload-Digest") !== sha1(block.subarray(end)))
      problem(`${where}: payload digest ${h("WARC-Payload-Digest")}`);
    const head = Buffer.from(block.subarray(0, end)).toString("latin1");
    if (type === "request") {
      if (pending) problem(`${where}: two requests in a row`);
      pending = { id, to: h("WARC-Concurrent-To"), uri: h("WARC-Target-URI") };
    } else if (type === "response") {
      if (!pending || pending.to !== id || h("WARC-Concurrent-To") !== pending.id ||
          pending.uri !== h("WARC-Target-URI"))
        problem(`${where}: not paired with the request before it`);
      if (/\r\nTransfer-Encoding:/i.test(head)) problem(`${where}: Transfer-Encoding stored`);
      pending = null;
    } else {
      problem(`${where}: unexpected type`);
    }
  }
  if (pending) problem(`${file}: ends with a request`);
  if (n === 0) problem(`${file}: no record`);
  records += n;

  // Pass 2: warcio's own HTTP parse of every response.
  for await (const record of new WARCParser(createReadStream(file))) {
    if (record.warcType === "response" && !(record.httpHeaders?.statusCode >= 100))
      problem(`${file}: warcio cannot parse the HTTP head of ${record.warcTargetURI}`);
    await record.skipFully();
  }
}

// The index, by warcio's own command.
const cli = join(pkg, "dist", "cli.js");
const run = spawnSync(process.execPath, [cli, "cdx-index", ...files], { encoding: "utf8",
  maxBuffer: 1 << 28 });
if (run.status !== 0) problem(`warcio cdx-index failed: ${run.stderr}`);
const lines = (text) => text.split("\n").filter((l) => l.length > 0);
const sortBytes = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b));
const theirs = lines(run.stdout).sort(sortBytes);
const ours = lines(readFileSync(oursPath, "utf8"));
if (theirs.length !== ours.length)
  problem(`index: warcio has ${theirs.length} lines, ours ${ours.length}`);
for (let i = 0; i < Math.max(theirs.length, ours.length); i++)
  if (theirs[i] !== ours[i]) problem(`index line ${i + 1}:\n  warcio ${theirs[i]}\n  ours   ${ours[i]}`);

console.log(`warc-check: ${files.length} files, ${records} records, ${ours.length} index lines, ` +
  `${problems} problems`);
process.exit(problems ? 1 : 0);
