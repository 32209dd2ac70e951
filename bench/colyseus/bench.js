"use strict";
/**
 * cardhall against Colyseus (a benchmark, not a test): runs the matrix and prints the table.
 *
 *   node bench.js [--tables 100,200] [--think 0,0.2] [--systems cardhall-json,cardhall-msgpack,colyseus]
 *                 [--rounds 3] [--warmup 10] [--duration 20] [--cardhall PATH] [--deflate] [--compact 0|1] [--group 0|1] [--json]
 *
 * For each round, each configuration (tables x think) and each server (in an order that turns with
 * the round, so no server always goes first): a fresh server pinned to core 0 (`taskset -c 0`), the
 * load generator (loadgen.js) pinned to core 1, the server stopped. cardhall is `cardhall serve`
 * (--cardhall, default the repository's .venv/bin/cardhall, else `cardhall` on PATH) with the
 * per-address limits lifted as `cardhall bench server` lifts them (every connection comes from
 * 127.0.0.1); Colyseus is server.js. Prints, per configuration and server, the median and range
 * over the rounds of each figure, then the ratio cardhall actions per server CPU-second / Colyseus's
 * (each round's pair) beside the target (>= 1). `--json` prints one JSON object instead.
 *
 * The systems `cardhall-json-deflate` and `cardhall-msgpack-deflate` are cardhall with `--ws-deflate`
 * and connections that offer `permessage-deflate` (loadgen.js `--deflate 1`); `--deflate` adds each
 * cardhall system's deflate twin to `--systems`. With any of them the table gets a column of the bytes
 * on the wire (the sockets' bytes read: compressed frames, headers included).
 *
 * The system `floor` (not in the default `--systems`) is floor_server.py run by the cardhall venv's Python: cardhall's
 * websocket stack (uvicorn, uvloop, server/ws_protocol.py) answering each client message with 8 frames of cardhall's
 * sizes and no game at all, driven by loadgen.js `--system floor`: the CPU per action any Python server on that stack
 * pays before its own work.
 *
 * cardhall's clients (loadgen.js): `--compact 1` (the default) asks for compact events (protocol 1.8: each step's
 * events as one array, decoded with the welcome's layouts); `--compact 0` for `events` frames (1.7, `--group 1`, the
 * default) or one `event` frame per event (`--group 0`, 1.6). The table's header names the mode.
 */
const fs = require("node:fs");
const net = require("node:net");
const os = require("node:os");
const path = require("node:path");
const { spawn, execFileSync } = require("node:child_process");

const HERE = __dirname;
const ROOT = path.resolve(HERE, "..", "..");
/** what the benchmark's cardhall lifts: every connection comes from one address (as `cardhall bench server`) */
const LIFTED = ["--max-connections-per-ip", "0", "--max-tables-per-address", "0", "--new-players-per-address", "0",
  "--bot-think-floor", "0", "--send-queue", "100000"];
const LABELS = { "cardhall-json": "cardhall JSON", "cardhall-msgpack": "cardhall msgpack", colyseus: "Colyseus",
  "cardhall-json-deflate": "cardhall JSON deflate", "cardhall-msgpack-deflate": "cardhall msgpack deflate",
  floor: "floor (Python, no game)" };
const deflated = (system) => system.endsWith("-deflate");

function parseArgs(argv) {
  const out = { tables: "100,200", think: "0,0.2", systems: "cardhall-json,cardhall-msgpack,colyseus", rounds: 3,
    warmup: 10, duration: 20, cardhall: "", deflate: false, compact: 1, group: 1, json: false };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i].replace(/^--/, "");
    if (!(key in out)) throw new Error(`unknown option ${argv[i]}`);
    if (typeof out[key] === "boolean") out[key] = true;
    else out[key] = typeof out[key] === "number" ? Number(argv[++i]) : argv[++i];
  }
  out.tables = out.tables.split(",").map(Number);
  out.think = out.think.split(",").map(Number);
  out.systems = out.systems.split(",");
  if (out.deflate) {
    const twin = (s) => (s.startsWith("cardhall") && !deflated(s) && !out.systems.includes(`${s}-deflate`) ? [`${s}-deflate`] : []);
    out.systems = out.systems.flatMap((s) => [s, ...twin(s)]);
  }
  for (const s of out.systems) if (!LABELS[s]) throw new Error(`unknown system ${s}`);
  if (!out.cardhall) {
    const venv = path.join(ROOT, ".venv", "bin", "cardhall");
    out.cardhall = fs.existsSync(venv) ? venv : "cardhall";
  }
  return out;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => { const { port } = srv.address(); srv.close(() => resolve(port)); });
  });
}

async function waitPort(port, child, seconds) {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`);
    const ok = await new Promise((resolve) => {
      const sock = net.connect(port, "127.0.0.1");
      sock.once("connect", () => { sock.destroy(); resolve(true); });
      sock.once("error", () => resolve(false));
    });
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the server did not listen on ${port} within ${seconds} s`);
}

/** The systems compared with Colyseus: every one but Colyseus and the floor (which plays no game). */
const contenders = (systems) => systems.filter((s) => s !== "colyseus" && s !== "floor");

/** The Python of the `cardhall` command (its venv's), for floor_server.py. */
function pythonOf(opts) {
  return opts.cardhall.includes("/") ? path.join(path.dirname(opts.cardhall), "python") : "python3";
}

/** argv pinned to `core` with taskset when there are two cores and taskset, else as it is. */
function pinned(core, argv, pin) {
  return pin ? ["taskset", "-c", String(core), ...argv] : argv;
}

function canPin() {
  if (os.cpus().length < 2) return false;
  try { execFileSync("taskset", ["-c", "0", "true"]); return true; } catch { return false; }
}

async function startServer(system, opts, pin) {
  const port = await freePort();
  const argv = system === "colyseus"
    ? [process.execPath, path.join(HERE, "server.js"), "--port", String(port)]
    : system === "floor" ? [pythonOf(opts), path.join(HERE, "floor_server.py"), "--port", String(port)]
    : [opts.cardhall, "serve", "--port", String(port), "--log-level", "warning", ...LIFTED,
      ...(deflated(system) ? ["--ws-deflate"] : [])];
  const full = pinned(0, argv, pin);
  const child = spawn(full[0], full.slice(1), { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, PYTHONUNBUFFERED: "1" } });
  child.stderrText = "";
  child.stderr.on("data", (d) => { child.stderrText = (child.stderrText + d).slice(-4000); });
  await waitPort(port, child, 60);
  const url = system === "colyseus" ? `ws://127.0.0.1:${port}` : `ws://127.0.0.1:${port}/ws`;
  return { child, url };
}

function stopServer(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    const kill = setTimeout(() => child.kill("SIGKILL"), 10000);
    child.once("exit", () => { clearTimeout(kill); resolve(); });
    child.kill("SIGTERM");
  });
}

function runLoad(system, url, serverPid, tables, think, opts, pin) {
  const argv = pinned(1, [process.execPath, path.join(HERE, "loadgen.js"), "--system", system.split("-")[0],
    "--url", url, "--codec", system.startsWith("cardhall-msgpack") ? "msgpack" : "json", "--tables", String(tables),
    "--think", String(think), "--warmup", String(opts.warmup), "--duration", String(opts.duration),
    "--server-pid", String(serverPid), "--compact", String(opts.compact), "--group", String(opts.group), ...(deflated(system) ? ["--deflate", "1"] : [])], pin);
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
    let out = ""; let err = "";
    child.stdout.on("data", (d) => { out += d; });
    child.stderr.on("data", (d) => { err = (err + d).slice(-4000); });
    const limit = setTimeout(() => child.kill("SIGKILL"), (opts.warmup + opts.duration + 180) * 1000);
    child.once("exit", (code) => {
      clearTimeout(limit);
      const line = out.trim().split("\n").pop();
      try { resolve(JSON.parse(line)); } catch { reject(new Error(`loadgen exited with ${code}: ${err || out}`)); }
    });
  });
}

async function measureOne(system, tables, think, opts, pin) {
  const { child, url } = await startServer(system, opts, pin);
  try {
    const result = await runLoad(system, url, child.pid, tables, think, opts, pin);
    if (child.exitCode !== null) result.errors.server_exited = child.exitCode;
    return { ...result, system };
  } finally {
    await stopServer(child);
  }
}

// -- the table ----------------------------------------------------------------------------------------
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };

function fmt(x, digits) {
  if (x === null || x === undefined || !Number.isFinite(x)) return "-";
  return x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** "median (min-max)" of `xs`, or the one value. */
function summary(xs, digits = 0) {
  const v = xs.filter((x) => x !== null && Number.isFinite(x));
  if (!v.length) return "-";
  if (v.length === 1) return fmt(v[0], digits);
  return `${fmt(median(v), digits)} (${fmt(Math.min(...v), digits)}-${fmt(Math.max(...v), digits)})`;
}

function versions(opts) {
  const pkg = (name) => JSON.parse(fs.readFileSync(path.join(HERE, "node_modules", name, "package.json"), "utf8")).version;
  let python = "";
  try {
    const shebang = fs.readFileSync(opts.cardhall.includes("/") ? opts.cardhall : execFileSync("which", [opts.cardhall]).toString().trim(), "utf8").split("\n")[0];
    python = execFileSync(shebang.replace(/^#!/, "").trim(), ["-c", "import sys; print(sys.version.split()[0])"]).toString().trim();
  } catch { python = "?"; }
  let commit = "";
  try { commit = execFileSync("git", ["-C", ROOT, "rev-parse", "--short", "HEAD"], { stdio: ["ignore", "pipe", "ignore"] }).toString().trim(); } catch { commit = "?"; }
  return { colyseus_core: pkg("@colyseus/core"), colyseus_schema: pkg("@colyseus/schema"),
    colyseus_ws_transport: pkg("@colyseus/ws-transport"), node: process.version, python, cardhall_commit: commit };
}

/** How cardhall's clients get their events (loadgen.js `--compact`, `--group`), for the table's header. */
function clientMode(opts) {
  if (opts.compact > 0) return "compact events (protocol 1.8, --compact 1: one array per table step)";
  if (opts.group > 0) return "grouped events (protocol 1.7, --compact 0 --group 1: one `events` frame per table step)";
  return "one `event` frame per event (protocol 1.6, --compact 0 --group 0)";
}

function report(results, opts, meta) {
  const lines = [];
  const v = meta.versions;
  lines.push(`cardhall against Colyseus: no-limit Hold'em, 6 client players + 2 spectators per table; ${opts.rounds} interleaved round(s), median (min-max)`);
  lines.push(`Colyseus ${v.colyseus_core.split(".").slice(0, 2).join(".")} (@colyseus/core ${v.colyseus_core}, @colyseus/schema ${v.colyseus_schema}, @colyseus/ws-transport ${v.colyseus_ws_transport}) on Node ${v.node}; cardhall ${v.cardhall_commit} on Python ${v.python}`);
  lines.push(`cardhall clients: ${clientMode(opts)}`);
  lines.push(`${meta.pinned ? "server on core 0, load on core 1 (taskset)" : "NOT pinned (fewer than 2 cores or no taskset)"}; window ${opts.warmup} s warm-up + ${opts.duration} s measured; load average ${meta.loadavg_start.map((x) => x.toFixed(2)).join(" ")} at start, ${meta.loadavg_end.map((x) => x.toFixed(2)).join(" ")} at end`);
  lines.push("");
  const wire = opts.systems.some(deflated);  // the bytes on the wire beside the payloads' (deflate runs)
  lines.push(`| tables | think s | server | actions/s | server CPU (cores) | actions per server CPU-s | messages/s received | KB/s received | ${wire ? "wire KB/s | " : ""}latency p50 / p99 ms | load CPU (cores) | load saturated |`);
  lines.push(`| --- | --- | --- | --- | --- | --- | --- | --- | ${wire ? "--- | " : ""}--- | --- | --- |`);
  for (const tables of opts.tables) {
    for (const think of opts.think) {
      for (const system of opts.systems) {
        const rs = results.filter((r) => r.tables === tables && r.think === think && r.system === system);
        if (!rs.length) continue;
        const col = (k, d) => summary(rs.map((r) => r[k]), d);
        const sat = rs.filter((r) => r.saturated).length;
        lines.push(`| ${tables} | ${think} | ${LABELS[system]} | ${col("actions_per_s", 0)} | ${col("server_cpu_share", 2)} | `
          + `${col("actions_per_server_cpu_s", 0)} | ${col("messages_per_s", 0)} | ${summary(rs.map((r) => r.bytes_per_s / 1024), 0)} | `
          + `${wire ? `${summary(rs.map((r) => (r.wire_bytes_per_s == null ? null : r.wire_bytes_per_s / 1024)), 0)} | ` : ""}`
          + `${col("latency_p50_ms", 1)} / ${col("latency_p99_ms", 1)} | ${col("load_cpu_share", 2)} | ${sat ? `yes (${sat} of ${rs.length})` : "no"} |`);
      }
    }
  }
  const ratios = ratioRows(results, opts);
  const others = contenders(opts.systems);
  if (ratios.length && others.length) {
    lines.push("");
    lines.push(`| tables | think s | ${others.map((s) => `${LABELS[s]} / Colyseus`).join(" | ")} | target |`);
    lines.push(`| --- | --- | ${others.map(() => "---").join(" | ")} | --- |`);
    for (const row of ratios) {
      lines.push(`| ${row.tables} | ${row.think} | ${others.map((s) => summary(row[s], 2)).join(" | ")} | >= 1 |`);
    }
    lines.push("");
    lines.push("ratio: cardhall's actions per server CPU-second over Colyseus's, per round (target: cardhall >= Colyseus)");
  }
  if (opts.systems.includes("floor")) {
    lines.push("");
    lines.push("floor: floor_server.py on cardhall's websocket stack, no game (each message answered by 8 frames of cardhall's sizes): what any Python server on that stack pays per action");
  }
  const bad = results.filter((r) => Object.keys(r.errors).length || r.violations || r.tables_ready !== r.tables);
  lines.push(bad.length ? `problems: ${bad.map((r) => `${r.system} ${r.tables}x${r.think}: ready ${r.tables_ready}, errors ${JSON.stringify(r.errors)}, leaks ${r.violations}`).join("; ")}`
    : "no errors, no lost connections, no hole-card leaks in any run");
  return lines.join("\n");
}

function ratioRows(results, opts) {
  if (!opts.systems.includes("colyseus")) return [];
  const rows = [];
  for (const tables of opts.tables) {
    for (const think of opts.think) {
      const row = { tables, think };
      for (const system of contenders(opts.systems)) {
        row[system] = [];
        for (let round = 0; round < opts.rounds; round++) {
          const ours = results.find((r) => r.round === round && r.tables === tables && r.think === think && r.system === system);
          const theirs = results.find((r) => r.round === round && r.tables === tables && r.think === think && r.system === "colyseus");
          if (ours && theirs && ours.actions_per_server_cpu_s && theirs.actions_per_server_cpu_s) {
            row[system].push(ours.actions_per_server_cpu_s / theirs.actions_per_server_cpu_s);
          }
        }
      }
      rows.push(row);
    }
  }
  return rows;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const pin = canPin();
  const meta = { versions: versions(opts), pinned: pin, loadavg_start: os.loadavg() };
  const results = [];
  for (let round = 0; round < opts.rounds; round++) {
    for (const tables of opts.tables) {
      for (const think of opts.think) {
        const k = round % opts.systems.length;
        const order = [...opts.systems.slice(k), ...opts.systems.slice(0, k)];
        for (const system of order) {
          if (!opts.json) process.stderr.write(`round ${round + 1}: ${tables} tables, think ${think}, ${LABELS[system]} ... `);
          let result;
          try {
            result = { ...(await measureOne(system, tables, think, opts, pin)), round };
          } catch (err) {
            result = { system, tables, think, round, tables_ready: 0, errors: { run: String(err.message || err).slice(0, 300) }, violations: 0 };
          }
          results.push(result);
          if (!opts.json) {
            process.stderr.write(`${result.actions_per_s ?? "-"} actions/s, ${result.actions_per_server_cpu_s ?? "-"} per server CPU-s`
              + `${result.saturated ? " (load saturated)" : ""}${Object.keys(result.errors).length ? ` errors ${JSON.stringify(result.errors)}` : ""}\n`);
          }
        }
      }
    }
  }
  meta.loadavg_end = os.loadavg();
  if (opts.json) {
    const ratios = ratioRows(results, opts);
    process.stdout.write(JSON.stringify({ meta, options: opts, results, ratios }) + "\n");
  } else {
    process.stdout.write(report(results, opts, meta) + "\n");
  }
}

main().catch((err) => {
  process.stderr.write(`bench: ${err.stack || err}\n`);
  process.exit(1);
});
