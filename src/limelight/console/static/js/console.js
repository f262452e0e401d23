// What every console page does: times in the browser's zone, the timeframe fields,
// repeatable form rows, copy buttons and confirmations. No inline handlers: the CSP
// allows scripts from these files only.

const pad = (n, width = 2) => String(n).padStart(width, "0");

export function localTime(ms, precise = false) {
  const d = new Date(ms);
  const day = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  const clock = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return precise ? `${day} ${clock}.${pad(d.getMilliseconds(), 3)}` : `${day} ${clock}`;
}

export function localizeTimes(root = document) {
  for (const el of root.querySelectorAll("time[data-ms]")) {
    const ms = Number(el.dataset.ms);
    el.textContent = localTime(ms, el.dataset.style === "precise");
    el.title = new Date(ms).toISOString();
  }
  for (const el of root.querySelectorAll("time[data-iso]")) {
    const ms = Date.parse(el.dataset.iso);
    if (!Number.isNaN(ms)) {
      el.textContent = localTime(ms);
      el.title = el.dataset.iso;
    }
  }
}

// A datetime-local input's value for a moment, in the browser's zone.
const localInput = (ms) => localTime(ms).replace(" ", "T");

function setUpTimeframe(box) {
  const select = box.querySelector("select[name=range]");
  const custom = box.querySelector(".custom-range");
  for (const input of box.querySelectorAll("input[data-edge]")) {
    input.value = localInput(Number(input.dataset.ms));
  }
  select.addEventListener("change", () => { custom.hidden = select.value !== ""; });
  // A preset is `range` alone; a custom range is `from` and `to` in unix ms, read in
  // the browser's zone from the inputs.
  box.closest("form")?.addEventListener("formdata", (event) => {
    const data = event.formData;
    data.delete("from");
    data.delete("to");
    if (select.value !== "") return;
    data.delete("range");
    for (const edge of ["from", "to"]) {
      const typed = box.querySelector(`input[data-edge=${edge}]`).value;
      if (typed) data.set(edge, String(new Date(typed).getTime()));
    }
  });
}

// Rows left empty say nothing: their controls are left out of what the form sends.
function withoutEmptyRows(form, send) {
  const idle = [];
  for (const row of form.querySelectorAll("[data-row]")) {
    const key = row.querySelector("[data-key]");
    if (key && key.value.trim() === "") {
      for (const control of row.querySelectorAll("input, select")) {
        if (!control.disabled) { control.disabled = true; idle.push(control); }
      }
    }
  }
  try {
    return send();
  } finally {
    for (const control of idle) control.disabled = false;
  }
}

export function formAddress(form) {
  // What the form puts in the address (constructing FormData fires `formdata`).
  return withoutEmptyRows(form, () => new URLSearchParams(new FormData(form)));
}

function setUpGetForm(form) {
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const action = new URL(form.action, location.href);
    action.search = formAddress(form).toString();
    location.assign(action);
  });
}

function setUpRows(fieldset) {
  const template = fieldset.querySelector("template");
  const add = fieldset.querySelector("[data-add-row]");
  add?.addEventListener("click", () => {
    const row = template.content.firstElementChild.cloneNode(true);
    add.before(row);
    row.querySelector("input, select")?.focus();
  });
  fieldset.addEventListener("click", (event) => {
    const remove = event.target.closest("[data-remove-row]");
    if (!remove) return;
    const row = remove.closest("[data-row]");
    const rows = fieldset.querySelectorAll("[data-row]");
    if (rows.length > 1) {
      const next = row.nextElementSibling?.querySelector("input, select") ?? add;
      row.remove();
      next?.focus();
    } else {
      for (const input of row.querySelectorAll("input")) input.value = "";
    }
  });
}

function setUpCopy(button) {
  button.addEventListener("click", async () => {
    const text = document.getElementById(button.dataset.copy).textContent;
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = "Copied";
    } catch {
      const range = document.createRange();
      range.selectNodeContents(document.getElementById(button.dataset.copy));
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      button.textContent = "Selected: copy it";
    }
  });
}

localizeTimes();
document.querySelectorAll("[data-timeframe]").forEach(setUpTimeframe);
document.querySelectorAll("fieldset[data-rows]").forEach(setUpRows);
document.querySelectorAll("form[method=get]").forEach(setUpGetForm);
document.querySelectorAll("button[data-copy]").forEach(setUpCopy);
for (const form of document.querySelectorAll("form[data-confirm]")) {
  form.addEventListener("submit", (event) => {
    if (!confirm(form.dataset.confirm)) event.preventDefault();
  });
}

// The section tabs scroll sideways on a narrow screen: the current one in view (at a
// phone's width Traces, Services, Alerts and Keys were past its edge). The bar alone
// scrolls, not the page.
const currentTab = document.querySelector("nav.sections a[aria-current=page]");
if (currentTab) {
  const bar = currentTab.parentElement;
  const overflow = currentTab.offsetLeft + currentTab.offsetWidth - bar.clientWidth;
  if (overflow > 0) bar.scrollLeft = overflow + bar.clientWidth / 4;
}
