// The trace waterfall: each span's bar placed on the trace's time line and its label
// indented by depth, through the CSSOM (the CSP forbids inline styles).
for (const bar of document.querySelectorAll(".span-bar[data-offset]")) {
  bar.style.left = `${bar.dataset.offset}%`;
  bar.style.width = `${bar.dataset.width}%`;
}
for (const label of document.querySelectorAll(".span-label[data-indent]")) {
  label.style.paddingLeft = `${Math.min(Number(label.dataset.indent), 24) * 0.9}rem`;
}

// A link to a span (#span-<id>, from the trace's events) opens its detail.
function openLinkedSpan() {
  const target = location.hash.startsWith("#span-") ? document.getElementById(location.hash.slice(1)) : null;
  if (target instanceof HTMLDetailsElement) {
    target.open = true;
    target.scrollIntoView({ block: "center" });
  }
}
window.addEventListener("hashchange", openLinkedSpan);
openLinkedSpan();
