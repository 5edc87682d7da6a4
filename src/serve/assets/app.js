// brink live page: polls /api/state, draws the series with uPlot, sends controls.
"use strict";
const POLL_MS = 80; // 12.5 polls a second: the charts update at least 10 times a second
const COLORS = ["#0072B2", "#009E73", "#D55E00", "#CC79A7", "#E69F00", "#56B4E9", "#000000"];
const DASHES = [[], [8, 4], [2, 3], [10, 3, 2, 3]];
const B = { info: null, run: -1, rows: [], charts: [], updates: 0, load: {}, tipping: null, markers: [], markersKey: "" };
window.brink = B; // for tests and the curious

const $ = (id) => document.getElementById(id);

function message(text, error) {
  const m = $("message");
  m.textContent = text;
  m.className = error ? "error" : "";
}

// The session's token, given to this page only; every control sends it back.
const TOKEN = (document.querySelector('meta[name="brink-token"]') || {}).content || "";

// POSTs a control (a JSON body) with the token: the server refuses any other.
function post(body) {
  return fetch("/api/control", {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Brink-Token": TOKEN },
    body: JSON.stringify(body),
  });
}
B.post = post; // for tests

async function control(body) {
  const r = await post(body);
  const j = await r.json();
  if (!r.ok) { message(j.error, true); return j; }
  message(`${body.control} at t = ${dur(j.time_s)}`, false);
  return j;
}

// A number for people, as the report writes it (engine::number::sig3): three significant
// figures, "148", "0.348", "2710". Every number the page shows goes through it (or dur).
function num(x) {
  x = Number(x);
  if (x === 0 || !Number.isFinite(x)) return String(x === 0 ? 0 : x);
  const r = Number(x.toPrecision(3));
  return Math.abs(r) >= 1e-4 ? String(r) : r.toExponential();
}
B.num = num; // for tests

// Simulated time in words: "250 ms", "12.5 s", "12 min 30 s", "1 h 5 min".
function dur(s) {
  s = Number(s);
  if (!Number.isFinite(s)) return String(s);
  if (s === 0) return "0 s";
  if (Math.abs(s) < 1) return `${num(s * 1000)} ms`;
  if (Math.abs(s) < 60) return `${num(s)} s`;
  const t = Math.round(s);
  if (t < 3600) return `${Math.floor(t / 60)} min` + (t % 60 ? ` ${t % 60} s` : "");
  const m = Math.round((s % 3600) / 60), h = Math.floor(s / 3600) + (m === 60 ? 1 : 0);
  return `${h} h` + (m % 60 ? ` ${m % 60} min` : "");
}
B.dur = dur;

// The Okabe-Ito colours of the report's timelines, and their dash patterns by quantity
// (goodput solid, offered long dashes, attempts short, failed dotted, rejected wide).
// A measure's key in words, as the report's pictures say it: `goodput_ratio.request` is
// "goodput ratio of request", `slo.api` "SLO windows met of api".
function measureWords(key) {
  const i = key.indexOf(".");
  if (i < 0) return key.replace(/_/g, " ");
  const [m, of] = [key.slice(0, i), key.slice(i + 1)];
  return `${m === "slo" ? "SLO windows met" : m.replace(/_/g, " ")} of ${of}`;
}

// A time-series column in words for a legend: `request.offered` is "request offered",
// `server.queue_len` "server queued".
const COLUMN_WORDS = { queue_len: "queued", utilization: "utilisation", hit_ratio: "hit ratio", users_waiting: "users waiting" };
function columnWords(name) {
  const i = name.lastIndexOf(".");
  if (i < 0) return name.replace(/_/g, " ");
  const q = name.slice(i + 1);
  return `${name.slice(0, i)} ${COLUMN_WORDS[q] || q.replace(/_/g, " ")}`;
}

// Text with `backquoted` names shown as code, built from nodes (never as HTML); a last
// backquote without its pair stays as written.
function withCode(el, text) {
  const parts = text.split("`");
  parts.forEach((p, k) => {
    if (k % 2 === 1 && k < parts.length - 1) {
      const c = document.createElement("code");
      c.textContent = p;
      el.appendChild(c);
    } else {
      el.appendChild(document.createTextNode((k % 2 === 1 ? "`" : "") + p));
    }
  });
}

const QUANTITIES = ["goodput", "offered", "attempts", "failed", "rejected"];
const QUANTITY_DASH = [[], [12, 6], [5, 4], [2, 4], [20, 4]];
// Tick steps of the time axis, in seconds: whole minutes and hours read as clock times.
const TIME_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];

function chart(el, title, cols) {
  const series = [{ label: "time" }];
  cols.forEach((c, i) => series.push({
    label: columnWords(c.label), stroke: c.color || COLORS[i % COLORS.length], dash: c.dash || DASHES[Math.floor(i / 2) % DASHES.length],
    width: 1.6, points: { show: false },
  }));
  const opts = {
    title: "", width: chartWidth(el), height: 200, series,
    scales: { x: { time: false } },
    axes: [
      { label: "simulated time", incrs: TIME_STEPS, values: (u, ticks) => ticks.map(dur) },
      // Wide enough for the longest tick label (a queue of 16,000 reads whole).
      { values: (u, ticks) => ticks.map(num), size: (u, values) => 24 + 8 * Math.max(3, ...(values || []).map((v) => String(v).length)) },
    ],
    legend: { live: false },
    hooks: { draw: [drawMarkers] },
  };
  // Each line's colour and dash, read before uPlot makes functions of them.
  const looks = series.map((s) => ({ stroke: s.stroke, dash: s.dash }));
  const u = new uPlot(opts, [[], ...cols.map(() => [])], el);
  swatches(u, looks);
  return { u, cols, el };
}

// Each legend entry's swatch is a short line in the series' colour and dash, so lines
// that differ only by dash are told apart.
function swatches(u, looks) {
  const rows = u.root.querySelectorAll(".u-legend .u-series");
  // The legend lists the time series too only when it shows values.
  const skip = looks.length - rows.length;
  rows.forEach((row, i) => {
    const s = looks[i + skip], m = row.querySelector(".u-marker");
    if (i + skip === 0 || !m) return;
    m.style.border = "none";
    m.style.background = "none";
    m.className = "u-marker swatch";
    m.innerHTML = `<svg width="30" height="10" aria-hidden="true"><line x1="0" y1="5" x2="30" y2="5" stroke="${s.stroke}" stroke-width="2.5" stroke-dasharray="${(s.dash || []).join(" ")}"/></svg>`;
  });
}

function chartWidth(el) {
  return Math.max(260, Math.floor(el.clientWidth || 600));
}

// The session's events as shaded bands and its interventions as dashed lines.
function drawMarkers(u) {
  const g = u.ctx, top = u.bbox.top, h = u.bbox.height;
  const [lo, hi] = [u.scales.x.min, u.scales.x.max];
  if (lo === undefined || hi === undefined) return;
  g.save();
  for (const m of B.markers) {
    if (m.start_s > hi || (m.end_s ?? m.start_s) < lo) continue;
    const x0 = u.valToPos(Math.max(m.start_s, lo), "x", true);
    if (m.kind === "event") {
      const x1 = u.valToPos(Math.min(m.end_s ?? m.start_s, hi), "x", true);
      g.fillStyle = "rgba(230, 159, 0, 0.18)";
      g.fillRect(x0, top, Math.max(x1 - x0, 2), h);
    } else {
      g.strokeStyle = "rgba(80, 80, 80, 0.7)";
      g.setLineDash([4, 3]);
      g.beginPath(); g.moveTo(x0, top); g.lineTo(x0, top + h); g.stroke();
    }
  }
  g.restore();
}

function buildCharts() {
  const names = B.info.columns;
  const pick = (suffixes, labeller) => {
    const out = [];
    names.forEach((n, i) => {
      const s = suffixes.find((x) => n.endsWith("." + x));
      if (s) out.push({ index: i, label: labeller(n, s), quantity: s });
    });
    return out;
  };
  const req = pick(QUANTITIES.map((q) => q + "_per_s"), (n) => n.replace("_per_s", ""));
  // One class: a colour per quantity, as the report draws it; several: a colour per class
  // (or call: `api.payments.failed`).
  const owner = (c) => c.label.slice(0, c.label.lastIndexOf("."));
  const classes = [...new Set(req.map(owner))];
  for (const c of req) {
    const q = QUANTITIES.indexOf(c.quantity.replace("_per_s", ""));
    c.dash = QUANTITY_DASH[q];
    c.color = COLORS[(classes.length > 1 ? classes.indexOf(owner(c)) : q) % COLORS.length];
  }
  // Waiting queries, and the users of closed classes waiting for an answer.
  const queue = pick(["queue_len", "users_waiting"], (n) => n);
  if (queue.some((c) => c.label.endsWith("users_waiting"))) $("queue-title").textContent = "Waiting (queries and users)";
  const util = pick(["utilization", "hit_ratio"], (n) => n);
  B.charts = [chart($("chart-requests"), "requests", req), chart($("chart-queue"), "queue", queue),
    chart($("chart-util"), "utilisation", util)];
  window.addEventListener("resize", () => {
    for (const c of B.charts) c.u.setSize({ width: chartWidth(c.el), height: 200 });
    drawTipping();
  });
}

// The session's events and interventions, fetched again when the run or its actions change.
async function fetchMarkers(s) {
  const key = `${s.run}/${s.log.length}`;
  if (B.markersKey === key) return;
  B.markersKey = key;
  const j = await (await fetch("/api/markers")).json();
  B.markers = j.markers;
  const list = $("schedule");
  list.innerHTML = "";
  // The file's own; the live ones are the actions' list. An event an [[at]] entry fires
  // is one item, naming the entry.
  for (const m of B.markers.filter((m) => !m.live)) {
    const li = document.createElement("li");
    const span = m.end_s === null ? "" : ` to ${dur(m.end_s)}`;
    const by = m.by ? `, fired by “${m.by}”` : "";
    li.textContent = `${dur(m.start_s)}${span}: ${m.label}${by}`;
    li.className = m.kind;
    list.appendChild(li);
  }
  startNote();
}

// While the run waits at time zero: when the file's first event fires, and a Start button.
function startNote() {
  const s = B.state, box = $("startbox");
  if (!s) return;
  const waiting = s.status === "paused" && s.now_s === 0;
  box.hidden = !waiting;
  if (!waiting) return;
  const first = B.markers.filter((m) => !m.live).sort((a, b) => a.start_s - b.start_s);
  const ev = first.find((m) => m.kind === "event");
  const next = ev || first[0];
  const when = next ? ` ${ev ? "The file's first event" : "The file's first intervention"}, ${next.label}, ` +
    `${ev ? "fires" : "applies"} at t = ${dur(next.start_s)} (${dur(next.start_s / s.speed)} of your time at ${num(s.speed)} simulated s per s).` : "";
  $("startnote").textContent = `Paused at the start.${when} Press Start to run it.`;
}

function redraw() {
  const t = B.rows.map((r) => r[0]);
  for (const c of B.charts) {
    c.u.setData([t, ...c.cols.map((col) => B.rows.map((r) => (Number.isFinite(r[col.index]) ? r[col.index] : null)))]);
  }
  B.updates++;
}

function buildControls() {
  const ctl = B.info.controls;
  for (const k of ctl.knobs.filter((k) => k.load)) {
    const div = document.createElement("div");
    div.className = "load";
    const v = Number(k.value ?? 0);
    div.innerHTML = `<label>${k.label.replace(/ \(requests\/s\)$/, "")}: <b data-out></b></label>`;
    const s = document.createElement("input");
    Object.assign(s, { type: "range", min: k.min, max: k.max, step: "any", value: v });
    s.dataset.path = k.path;
    s.id = "load-" + k.path;
    const out = div.querySelector("[data-out]");
    out.textContent = `${num(v)} requests/s`;
    B.load[k.path] = v;
    s.addEventListener("input", () => { s.dataset.dirty = "1"; out.textContent = `${num(s.value)} requests/s`; });
    s.addEventListener("change", async () => {
      delete s.dataset.dirty;
      const x = Number(num(s.value));
      const j = await control({ control: "set", path: k.path, value: x });
      if (j.ok) { B.load[k.path] = x; drawTipping(); }
    });
    div.appendChild(s);
    $("loads").appendChild(div);
  }
  for (const e of ctl.events) {
    const b = document.createElement("button");
    b.className = "fire";
    b.textContent = `Fire ${e.label} (for ${dur(e.for_s)})`;
    b.dataset.event = e.name;
    b.addEventListener("click", () => control({ control: "fire", event: e.name }));
    $("events").appendChild(b);
  }
  for (const k of ctl.knobs.filter((k) => !k.load)) {
    const label = document.createElement("label");
    label.textContent = k.label;
    label.title = k.path;
    let input;
    if (k.kind === "choice") {
      input = document.createElement("select");
      for (const o of k.options) input.add(new Option(o, o, false, o === k.value));
      input.setAttribute("aria-label", k.label);
    } else if (k.kind === "bool") {
      input = document.createElement("input");
      input.type = "checkbox";
      input.checked = !!k.value;
    } else if (k.kind === "duration" || k.kind === "text") {
      // A word the loader checks; the values the file uses are offered.
      input = document.createElement("input");
      Object.assign(input, { type: "text", size: 8, placeholder: k.kind === "duration" ? "e.g. 250ms" : "" });
      if (k.value !== null && k.value !== undefined) input.value = k.value;
      const list = document.createElement("datalist");
      list.id = "options-" + k.path;
      for (const o of k.options) list.appendChild(new Option(o, o));
      input.setAttribute("list", list.id);
      $("knobs").appendChild(list);
    } else {
      input = document.createElement("input");
      Object.assign(input, { type: "number", min: k.min, step: k.kind === "integer" ? 1 : "any", size: 7 });
      if (k.value !== null && k.value !== undefined) input.value = num(k.value);
    }
    input.dataset.path = k.path;
    // Edited and not yet applied: the live value does not overwrite it.
    input.addEventListener("input", () => { input.dataset.dirty = "1"; });
    const b = document.createElement("button");
    b.textContent = "Apply";
    b.addEventListener("click", () => {
      delete input.dataset.dirty;
      let value = input.value;
      if (k.kind === "bool") value = input.checked;
      else if (k.kind === "integer" || k.kind === "number") value = Number(input.value);
      control({ control: "set", path: k.path, value });
    });
    b.dataset.path = k.path;
    $("knobs").append(label, input, b);
  }
  for (const v of ctl.variants) {
    const name = document.createElement("span");
    name.textContent = v.name;
    name.title = v.description;
    name.dataset.variant = v.name;
    const now = document.createElement("button");
    now.textContent = "Apply now";
    now.title = v.live ? v.description : "replaces the timeline of interventions: start over with it";
    now.disabled = !v.live;
    now.dataset.apply = v.name;
    now.addEventListener("click", () => control({ control: "variant", name: v.name }));
    const over = document.createElement("button");
    over.textContent = "Start over";
    over.title = "run it from time zero: " + v.description;
    over.dataset.restart = v.name;
    over.addEventListener("click", () => control({ control: "reset", variant: v.name }));
    $("variants").append(name, now, over);
  }
  $("asfile").onclick = () => control({ control: "reset", variant: null });
  $("extend").onclick = () => control({ control: "extend" });
  $("extend").textContent = `Run on ${dur(B.info.duration_s)}`;
  $("pause").onclick = () => control({ control: "pause" });
  $("resume").onclick = () => control({ control: "resume" });
  $("start").onclick = () => control({ control: "resume" });
  $("reset").onclick = () => control({ control: "reset" });
  $("seedgo").onclick = () => control({ control: "seed", value: Number($("seed").value) });
  $("speedgo").onclick = () => control({ control: "speed", value: Number($("speed").value) });
  $("seed").value = B.info.seed;
}

function showState(s) {
  $("clock").textContent = `t = ${dur(s.now_s)} of ${dur(s.end_s)}` + (s.variant ? `, variant ${s.variant}` : "");
  B.state = s;
  startNote();
  showKnobs(s.knobs || {});
  $("asfile").hidden = !s.variant;
  for (const el of document.querySelectorAll("[data-variant]")) el.className = el.dataset.variant === s.variant ? "current" : "";
  const redesigned = B.variant !== s.variant;
  B.variant = s.variant;
  $("runstate").textContent = s.status + (s.error ? `: ${s.error}` : "");
  $("speedinfo").textContent = s.status === "running"
    ? `at ${num(s.achieved_speed)} simulated s per s (asked ${num(s.speed)}), ${num(s.updates_per_s)} updates per s`
    : `(speed: ${num(s.speed)} simulated s per s)`;
  if (document.activeElement !== $("speed")) $("speed").value = s.speed;
  const v = $("verdict");
  const h = B.info.health;
  if (!s.verdict) { v.textContent = "…"; v.className = "verdict"; }
  else {
    // The verdict names its cause ("degraded: shedding 43% at the rate limit"); the
    // measure it was judged by follows.
    const m = s.measure === null ? "" : ` (${measureWords(h.measure)} ${num(s.measure)})`;
    v.textContent = s.verdict_text + m;
    v.className = "verdict " + s.verdict;
  }
  // The run so far in words: redrawn when a sentence is added or changes.
  const sentences = s.narrative || [];
  const story = sentences.map((x) => `${x.at}: ${x.text}`);
  const told = $("narrative");
  if (told.dataset.story !== story.join("\n")) {
    told.dataset.story = story.join("\n");
    told.innerHTML = "";
    for (const x of sentences) {
      const li = document.createElement("li");
      const at = document.createElement("b");
      at.textContent = x.at;
      li.append(at, ": ");
      withCode(li, x.text);
      told.appendChild(li);
    }
  }
  drawStructure(s);
  const log = $("log");
  if (log.children.length !== s.log.length || redesigned) {
    log.innerHTML = "";
    for (const a of s.log) {
      const li = document.createElement("li");
      li.textContent = `${dur(a.time_ms / 1000)}: ${a.label}`;
      log.appendChild(li);
    }
    drawTipping();
  }
}

// Every knob shows the value in force now (the file's, or the last [[at]] entry's, the
// file's or a live one), unless it is being edited.
function showKnobs(values) {
  let load = false;
  for (const k of B.info.controls.knobs) {
    const v = values[k.path] ?? k.value;
    const input = document.querySelector(`#knobs [data-path="${k.path}"]:not(button), #loads [data-path="${k.path}"]`);
    if (k.load && B.load[k.path] !== Number(v ?? 0)) { B.load[k.path] = Number(v ?? 0); load = true; }
    if (!input || input.dataset.dirty || document.activeElement === input || v === null || v === undefined) continue;
    if (k.kind === "bool") input.checked = !!v;
    else {
      const shown = typeof v === "number" ? num(v) : String(v);
      if (input.value !== shown && !(input.type === "range" && Number(input.value) === v)) input.value = shown;
      if (k.load) input.parentElement.querySelector("[data-out]").textContent = `${num(v)} requests/s`;
    }
  }
  if (load) drawTipping();
}

async function poll() {
  try {
    const r = await fetch(`/api/state?since=${B.rows.length}&run=${B.run < 0 ? 0 : B.run}`);
    const s = await r.json();
    if (s.run !== B.run || s.from === 0) B.rows = [];
    B.run = s.run;
    B.rows.push(...s.rows);
    showState(s);
    fetchMarkers(s);
    redraw();
  } catch (e) {
    $("runstate").textContent = "server unreachable";
  }
  setTimeout(poll, POLL_MS);
}

async function pollTipping() {
  const r = await fetch("/api/tipping");
  const t = await r.json();
  if (t.status === "running") { $("tipnote").textContent = "running a quick tipping sweep…"; setTimeout(pollTipping, 1000); return; }
  if (t.status === "none") {
    $("tipnote").textContent = "no tipping picture: " + t.note;
    $("tipping").classList.add("empty");
    return;
  }
  B.tipping = t;
  drawTipping();
}

// The curve of the design running: the variant's when the sweep has it, else the file's.
function tippingOf(d) {
  return d.variants.find((v) => v.variant === (B.variant || "base")) || d.variants[0];
}

function drawTipping() {
  const c = $("tipping"), g = c.getContext("2d");
  // Drawn at the size shown, so the text stays legible in a narrow column.
  const w = Math.round(c.clientWidth) || 420;
  if (w !== c.width) { c.width = w; c.height = Math.round(w * 240 / 420); }
  g.clearRect(0, 0, c.width, c.height);
  if (!B.tipping) return;
  const d = B.tipping.data, v = tippingOf(d), pts = v.points;
  const tp = v.tipping_point === null ? "none in range" : num(v.tipping_point);
  $("tipnote").textContent = `From ${B.tipping.source}: ${v.variant}. Tipping point ${tp} ${d.unit || ""}; operating point ${num(v.operating_point)}. The orange line is the load now.`;
  if (!pts.length) return;
  const xs = pts.map((p) => p.value);
  const lo = Math.min(...xs), hi = Math.max(...xs);
  const L = 40, R = c.width - 14, T = 22, Bm = c.height - 30;
  const X = (x) => L + (R - L) * (x - lo) / ((hi - lo) || 1), Y = (p) => Bm - (Bm - T) * p;
  g.strokeStyle = "#999"; g.strokeRect(L, T, R - L, Bm - T);
  g.fillStyle = "#222"; g.font = "11px sans-serif";
  g.fillText("P(collapse)", 2, T - 8); g.fillText("1", L - 10, T + 8); g.fillText("0", L - 10, Bm);
  g.fillText(`${d.label || d.vary}: ${num(lo)}`, L, Bm + 14); g.textAlign = "right"; g.fillText(num(hi), R, Bm + 14); g.textAlign = "left";
  if (v.collapse_fit) {
    g.strokeStyle = "#0072B2"; g.beginPath();
    for (let i = 0; i <= 100; i++) {
      const x = lo + (hi - lo) * i / 100;
      const p = 1 / (1 + Math.exp(-(x - v.collapse_fit.midpoint) / v.collapse_fit.scale));
      i ? g.lineTo(X(x), Y(p)) : g.moveTo(X(x), Y(p));
    }
    g.stroke();
  }
  g.fillStyle = "#0072B2";
  for (const p of pts) { g.beginPath(); g.arc(X(p.value), Y(p.collapse_probability), 3, 0, 7); g.fill(); }
  if (v.tipping_point !== null) {
    g.setLineDash([4, 3]); g.strokeStyle = "#009E73"; g.beginPath();
    g.moveTo(X(v.tipping_point), T); g.lineTo(X(v.tipping_point), Bm); g.stroke(); g.setLineDash([]);
  }
  const path = d.vary, now = B.load[path];
  if (now !== undefined) {
    const x = Math.min(Math.max(now, lo), hi);
    g.strokeStyle = "#D55E00"; g.lineWidth = 2; g.beginPath(); g.moveTo(X(x), T); g.lineTo(X(x), Bm); g.stroke(); g.lineWidth = 1;
    g.fillStyle = "#D55E00"; g.fillText(`now ${num(now)}`, Math.min(X(x) + 3, R - 60), T + 22);
  }
}

async function main() {
  B.info = await (await fetch("/api/info")).json();
  document.title = `brink live: ${B.info.name}`;
  $("title").textContent = `${B.info.name}: ${B.info.title}`;
  $("footer").textContent = `brink ${B.info.version} · brink serve ${B.info.name} · charts: uPlot (MIT)`;
  buildControls();
  buildCharts();
  poll();
  pollTipping();
}
main();

// The system drawn (issue 24 item 5): the server draws it from the rows so far
// (`structure`, SVG text of its own making); the page swaps it in when it changes.
let shownStructure = null;
function drawStructure(s) {
  const box = $("structure");
  if (!box || typeof s.structure !== "string" || shownStructure === s.structure) return;
  shownStructure = s.structure;
  box.innerHTML = s.structure;
}
