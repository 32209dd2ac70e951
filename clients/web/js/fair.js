// The G-2 generator of protocol v1 ("Randomness" in protocol/SPEC.md), with WebCrypto's SHA-256.
//
//   key    = SHA-256("cardhall/g2/v1" || server_seed || for each client seed in seat order:
//                    4-byte big-endian length || UTF-8 bytes)
//   stream = SHA-256(key || 0 as 8-byte big-endian) || SHA-256(key || 1) || ...
//   randbelow(n): 8 bytes big-endian as x; reject x >= 2^64 - (2^64 mod n); else x mod n
//   shuffle(items): Fisher-Yates from the end: for i = len-1 down to 1, j = randbelow(i+1), swap
//
// WebCrypto digests are asynchronous while a replay is easier to write as plain code, so the
// stream is computed ahead in blocks; a replay that reads past them throws NeedMore and
// `replayWith` runs it again with a longer stream.

const encoder = new TextEncoder();
const DOMAIN = encoder.encode("cardhall/g2/v1");
const TWO64 = 1n << 64n;

export function hexToBytes(hex) {
  if (typeof hex !== "string" || hex.length % 2 || /[^0-9a-f]/i.test(hex)) throw new Error(`not hex: ${hex}`);
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(i * 2, 2), 16);
  return out;
}

export function bytesToHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

export async function sha256(bytes) {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
}

/** Hex SHA-256 of the revealed server seed (hex): what the commitment must equal. */
export async function commitmentOf(serverSeedHex) {
  return bytesToHex(await sha256(hexToBytes(serverSeedHex)));
}

/** The generator key from the server seed (hex) and the client seeds (strings, in seat order). */
export async function deriveKey(serverSeedHex, clientSeeds = []) {
  const parts = [DOMAIN, hexToBytes(serverSeedHex)];
  for (const seed of clientSeeds) {
    const bytes = encoder.encode(seed);
    const len = new Uint8Array(4);
    new DataView(len.buffer).setUint32(0, bytes.length, false);
    parts.push(len, bytes);
  }
  return sha256(concat(parts));
}

/** Client seeds of a `match_ended` (seat -> seed) in seat order. */
export function seedsInSeatOrder(clientSeeds) {
  return Object.keys(clientSeeds || {}).map(Number).sort((a, b) => a - b).map((s) => clientSeeds[String(s)]);
}

export class NeedMore extends Error {}

async function streamBlocks(key, count) {
  const jobs = [];
  for (let i = 0; i < count; i++) {
    const input = new Uint8Array(key.length + 8);
    input.set(key);
    new DataView(input.buffer).setBigUint64(key.length, BigInt(i), false);
    jobs.push(crypto.subtle.digest("SHA-256", input));
  }
  return concat((await Promise.all(jobs)).map((d) => new Uint8Array(d)));
}

/** A G-2 generator over a precomputed stream (synchronous reads). */
export class FairRandom {
  constructor(stream) {
    this.stream = stream;
    this.view = new DataView(stream.buffer, stream.byteOffset, stream.byteLength);
    this.position = 0;
  }

  static async create(key, blocks = 512) {
    return new FairRandom(await streamBlocks(key, blocks));
  }

  /** The next 8 bytes as an unsigned big-endian BigInt. */
  next64() {
    if (this.position + 8 > this.stream.length) throw new NeedMore();
    const x = this.view.getBigUint64(this.position, false);
    this.position += 8;
    return x;
  }

  /** Uniform integer in [0, n) by rejection (n: a number or a BigInt >= 1; same type back). */
  randbelow(n) {
    const big = BigInt(n);
    if (big < 1n) throw new RangeError("randbelow needs n >= 1");
    if (big === 1n) return typeof n === "bigint" ? 0n : 0;
    const limit = TWO64 - (TWO64 % big);
    for (;;) {
      const x = this.next64();
      if (x < limit) return typeof n === "bigint" ? x % big : Number(x % big);
    }
  }

  /** Fisher-Yates from the end, in place. */
  shuffle(items) {
    for (let i = items.length - 1; i >= 1; i--) {
      const j = this.randbelow(i + 1);
      const t = items[i]; items[i] = items[j]; items[j] = t;
    }
    return items;
  }
}

/** Run `replay(rng)` (synchronous) with a generator keyed by `key`, extending the stream as needed. */
export async function replayWith(key, replay, blocks = 512) {
  for (;;) {
    const rng = await FairRandom.create(key, blocks);
    try {
      return replay(rng);
    } catch (err) {
      if (!(err instanceof NeedMore)) throw err;
      blocks *= 4;
      if (blocks > (1 << 22)) throw new Error("replay needs an implausibly long stream");
    }
  }
}

/** A random client seed for `join` (hex of 16 bytes from the browser's CSPRNG). */
export function newClientSeed() {
  return bytesToHex(crypto.getRandomValues(new Uint8Array(16)));
}
