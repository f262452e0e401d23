// The explorer: the count histogram (stacked by level), the field sidebar (a key's top
// values fetched as JSON when it is opened), a dataset or timeframe chosen applies at
// once, live tail over server-sent events (with pause, paused while the tab is hidden),
// and j/k to move between events.
import { localTime } from "./console.js";
import { formatNumber, readData, timeChart } from "./charts.js";

const histogram = readData("histogram-data");
const chartEl = document.getElementById("histogram");
// Levels that say something is wrong keep the page's colours for it, whatever their rank.
const TONES = { error: "#d1495b", warn: "#f3a712" };
if (histogram && chartEl) {
  const lines = histogram.lines.map((line) => ({ ...line, colour: TONES[line.tone] }));
  timeChart(chartEl, histogram.times, lines, { bars: true, stacked: histogram.stacked, height: 120, span: histogram.span });
}

// A dataset or a preset timeframe picked runs the search at once (a custom range waits
// for Search: its fields change a part at a time).
const searchForm = document.querySelector("form[data-search]");
if (searchForm) {
  searchForm.querySelector("select[name=ds]")?.addEventListener("change", () => searchForm.requestSubmit());
  searchForm.querySelector("select[name=range]")?.addEventListener("change", (event) => {
    if (event.target.value !== "") searchForm.requestSubmit();
  });
}

// The field sidebar: a key's link opens its values in place (the same list the page
// draws for `open=`); the address keeps the open key, so a reload or a link shows it.
function link(href, text, label, title) {
  const a = document.createElement("a");
  a.href = href;
  a.textContent = text;
  if (label) a.setAttribute("aria-label", label);
  if (title) a.title = title;
  return a;
}

const percent = (share) => `${formatNumber(Math.round(share * 100000) / 1000)}%`;

function valuesPanel(answer) {
  const box = document.createElement("div");
  box.className = "field-values";
  box.dataset.valuesOf = answer.key;
  const actions = document.createElement("p");
  actions.className = "key-actions";
  actions.append(link(answer.group_by, "Group by"));
  if (answer.column) actions.append(" · ", link(answer.column, "Add column"));
  box.append(actions);
  if (!answer.values.length) {
    const none = document.createElement("p");
    none.className = "muted";
    none.textContent = "No event here holds this key.";
    box.append(none);
    return box;
  }
  const table = document.createElement("table");
  table.className = "top-values";
  const body = table.createTBody();
  for (const row of answer.values) {
    const tr = body.insertRow();
    const value = tr.insertCell();
    value.className = "value";
    const only = `Only events where ${answer.key} = this value`;
    value.append(row.include ? link(row.include, row.text, null, only) : row.text);
    const share = tr.insertCell();
    share.className = "num";
    share.textContent = percent(row.share);
    const out = tr.insertCell();
    out.className = "out";
    if (row.exclude) out.append(link(row.exclude, "≠", `Leave out ${row.text}`, `Only events where ${answer.key} != this value`));
    const bar = body.insertRow();
    bar.className = "share-bar";
    const cell = bar.insertCell();
    cell.colSpan = 3;
    const meter = document.createElement("meter");
    meter.min = 0;
    meter.max = 1;
    meter.value = row.share;
    meter.setAttribute("aria-label", `${percent(row.share)} of the events that hold it`);
    cell.append(meter);
  }
  box.append(table);
  const note = document.createElement("p");
  note.className = "muted";
  const plural = (n, word) => `${formatNumber(n)} ${word}${n === 1 ? "" : "s"}`;
  note.textContent = `${plural(answer.distinct, "value")} in ${plural(answer.events, "event")}` +
    (answer.sampled ? ` (the newest ${formatNumber(answer.events)})` : "");
  box.append(note);
  return box;
}

function problemPanel(key, text) {
  const box = document.createElement("div");
  box.className = "field-values";
  box.dataset.valuesOf = key;
  const p = document.createElement("p");
  p.className = "error";
  p.textContent = text;
  box.append(p);
  return box;
}

const sidebar = document.querySelector("[data-sidebar]");
sidebar?.addEventListener("click", async (event) => {
  const key = event.target.closest("a[data-values]");
  if (!key || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
  event.preventDefault();
  const item = key.closest("li");
  const name = item.dataset.field;
  const shown = item.querySelector(".field-values");
  for (const other of sidebar.querySelectorAll("a[aria-expanded=true]")) other.setAttribute("aria-expanded", "false");
  for (const panel of sidebar.querySelectorAll(".field-values")) panel.remove();
  if (shown) {
    const url = new URL(location.href);
    url.searchParams.delete("open");
    history.replaceState(null, "", url);
    return; // a second click closes it
  }
  key.setAttribute("aria-expanded", "true");
  history.replaceState(null, "", key.href);
  let panel;
  try {
    const answer = await fetch(key.dataset.values, { headers: { Accept: "application/json" } });
    const body = await answer.json();
    panel = answer.ok ? valuesPanel(body) : problemPanel(name, body.reason ?? body.message);
  } catch {
    panel = problemPanel(name, "The values could not be read; try again.");
  }
  if (key.getAttribute("aria-expanded") === "true" && !item.querySelector(".field-values")) key.after(panel);
});

const MAX_ROWS = 500;
const tailBox = document.querySelector("[data-tail]");
const table = document.querySelector("table[data-events] tbody");

const withLevel = Boolean(document.querySelector("table[data-events]")?.dataset.level);

function row(line) {
  const tr = document.createElement("tr");
  tr.className = line.tone ? `new level-${line.tone}` : "new";
  const when = document.createElement("td");
  when.className = "when";
  const link = document.createElement("a");
  link.href = line.link;
  const time = document.createElement("time");
  time.dateTime = String(line.time);
  time.textContent = localTime(line.time, true);
  link.append(time);
  when.append(link);
  if (line.trace_id) {
    const trace = document.createElement("a");
    trace.className = "trace-link";
    trace.href = line.trace;
    trace.textContent = "trace";
    when.append(" ", trace);
  }
  const cells = [line.service, line.summary, ...line.cells].map((text, i) => {
    const td = document.createElement("td");
    if (i === 1) td.className = "message";
    td.textContent = text;
    return td;
  });
  tr.append(when, ...cells);
  if (withLevel) {
    const level = document.createElement("td");
    level.className = "level";
    level.textContent = line.level ?? "";
    when.after(level);
  }
  return tr;
}

if (tailBox && table) {
  const button = tailBox.querySelector("[data-tail-toggle]");
  const state = tailBox.querySelector("[data-tail-state]");
  let source = null;
  let lastId = null;
  let wanted = false;
  let received = 0;

  const stop = (text) => {
    source?.close();
    source = null;
    button.setAttribute("aria-pressed", "false");
    button.textContent = "Live tail";
    state.textContent = text;
  };
  const start = () => {
    const url = new URL(tailBox.dataset.tail, location.href);
    // From the last event received (resuming after a pause), else from when the page
    // was made (the address says so), so nothing stored in between is missed.
    if (lastId) url.searchParams.set("after", lastId);
    source = new EventSource(url);
    button.setAttribute("aria-pressed", "true");
    button.textContent = "Pause";
    state.textContent = "Connecting…";
    source.addEventListener("ready", (e) => {
      lastId = lastId ?? e.lastEventId;
      if (!received) state.textContent = "Live: waiting for new events…";
    });
    source.addEventListener("events", (e) => {
      const { lines, arrived } = JSON.parse(e.data);
      lastId = e.lastEventId;
      document.querySelector("[data-empty]")?.remove();
      for (const line of [...lines].reverse()) table.prepend(row(line));
      while (table.rows.length > MAX_ROWS) table.deleteRow(-1);
      received += arrived;
      const more = arrived > lines.length ? ` (${arrived - lines.length} more not shown)` : "";
      state.textContent = `Live: ${received} new event${received === 1 ? "" : "s"}${more}`;
    });
    source.addEventListener("problem", (e) => { wanted = false; stop(JSON.parse(e.data)); });
  };
  button.addEventListener("click", () => {
    wanted = !source;
    if (source) stop("Paused.");
    else start();
  });
  document.addEventListener("visibilitychange", () => {
    if (document.hidden && source) stop("Paused while the tab is hidden.");
    else if (!document.hidden && wanted && !source) start();
  });
}

// j / k: the next or previous event, when no field has the keyboard.
document.addEventListener("keydown", (event) => {
  if (!["j", "k"].includes(event.key) || event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.target.closest("input, select, textarea")) return;
  const links = [...document.querySelectorAll("table[data-events] td.when a:first-child")];
  if (!links.length) return;
  const at = links.indexOf(document.activeElement);
  const next = event.key === "j" ? Math.min(at + 1, links.length - 1) : Math.max(at - 1, 0);
  links[at === -1 ? 0 : next].focus();
  event.preventDefault();
});
