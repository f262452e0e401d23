// The explorer: the count histogram, live tail over server-sent events (with pause,
// paused while the tab is hidden), and j/k to move between events.
import { localTime } from "./console.js";
import { readData, timeChart } from "./charts.js";

const histogram = readData("histogram-data");
const chartEl = document.getElementById("histogram");
if (histogram && chartEl) {
  timeChart(chartEl, histogram.times, [{ label: "events", values: histogram.counts }], { bars: true, height: 120, span: histogram.span });
}

const MAX_ROWS = 500;
const tailBox = document.querySelector("[data-tail]");
const table = document.querySelector("table[data-events] tbody");

function row(line) {
  const tr = document.createElement("tr");
  tr.className = "new";
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
