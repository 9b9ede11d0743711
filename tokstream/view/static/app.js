// tokstream view: renders the JSON API's answers (tokstream/view/api.py documents them).
// Vanilla JS, no build step, nothing loaded from outside. User text only ever reaches the
// page through textContent, never innerHTML. With a JSON block of id "data" (the --html
// page) it renders that once and hides the interactive boxes.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const COLOURS = 8;
  const DEBOUNCE_MS = 150;

  const dataBlock = $("data");
  const staticData = dataBlock ? JSON.parse(dataBlock.textContent) : null;
  // The record behind each rendered token span, for the tooltip.
  const records = new WeakMap();

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function spacedHex(hex) {
    return (hex.match(/../g) || []).join(" ");
  }

  function showError(id, message) {
    const box = $(id);
    if (!box) return;
    box.textContent = message || "";
    box.hidden = !message;
  }

  function debounce(fn) {
    let timer = null;
    return function () {
      clearTimeout(timer);
      timer = setTimeout(fn, DEBOUNCE_MS);
    };
  }

  async function post(path, body) {
    const response = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    let data;
    try {
      data = await response.json();
    } catch (e) {
      data = { error: "HTTP " + response.status + " " + response.statusText };
    }
    if (!response.ok) throw new Error(data.error || "HTTP " + response.status);
    return data;
  }

  // One span per token, class "tok c<i mod 8>", data-id, data-index. Offsets are code
  // points, so the text is cut as an array of code points. A token whose characters an
  // earlier token already showed (the second half of a character split over two tokens,
  // an inserted "▁") gets an empty span of class "cont", drawn as a small dot by the CSS.
  function tokenSpan(record, index) {
    const span = el("span", "tok c" + (index % COLOURS));
    span.dataset.id = String(record.id);
    span.dataset.index = String(index);
    records.set(span, record);
    return span;
  }

  function renderTokens(container, text, tokens, stableLen) {
    container.replaceChildren();
    const points = Array.from(text);
    const marker = el("span", "boundary", "");
    marker.title = "stable boundary: tokens after it may change when text is appended";
    let pos = 0;
    tokens.forEach((record, i) => {
      if (i === stableLen) container.append(marker);
      const start = Math.max(record.text_start, pos);
      const end = Math.max(record.text_end, start);
      if (start > pos) container.append(document.createTextNode(points.slice(pos, start).join("")));
      const span = tokenSpan(record, i);
      const piece = points.slice(start, end).join("");
      span.textContent = piece;
      if (piece === "") span.classList.add("cont");
      else if (/^\s+$/.test(piece)) span.classList.add("ws");
      if (piece.endsWith("\n")) span.classList.add("nl");
      if (i >= stableLen) span.classList.add("unstable");
      container.append(span);
      pos = Math.max(pos, end);
    });
    if (pos < points.length) container.append(document.createTextNode(points.slice(pos).join("")));
    if (stableLen >= tokens.length) container.append(marker);
  }

  // A token list without the source text (append tails, removed tokens, allowed ids):
  // each span shows the token's own decoded bytes.
  function renderRecords(container, list, firstIndex) {
    container.replaceChildren();
    list.forEach((record, i) => {
      const span = tokenSpan(record, (firstIndex || 0) + i);
      span.textContent = record.text;
      if (record.text === "") span.classList.add("cont");
      container.append(span);
    });
  }

  function renderPanels(data, names) {
    const panels = $("panels");
    panels.replaceChildren();
    data.results.forEach((result) => {
      const panel = el("section", "panel");
      panel.dataset.tokenizer = result.tokenizer;
      const head = el("div", "panel-head");
      head.append(el("h2", "name", result.tokenizer));
      head.append(el("span", "count", String(result.count)));
      head.append(el("span", "muted", result.count === 1 ? " token" : " tokens"));
      const unstable = result.count - result.stable_len;
      head.append(
        el(
          "span",
          "muted stable",
          "; " + result.stable_len + " stable, " + unstable + " may change (boundary at character " + result.boundary + ")"
        )
      );
      panel.append(head);
      const body = el("div", "tokens");
      renderTokens(body, currentText(), result.tokens, result.stable_len);
      panel.append(body);
      panels.append(panel);
    });
    panels.dataset.key = data.length + ":" + names.join(",");
    panels.dataset.status = "ready";
  }

  // ---------------------------------------------------------------- tooltip

  function setupTooltip() {
    const tip = $("tooltip");
    function line(label, value, className) {
      const row = el("div", className);
      row.append(el("span", "tt-label", label + " "));
      row.append(el("span", "tt-value", value));
      return row;
    }
    document.addEventListener("mouseover", (event) => {
      const span = event.target instanceof Element ? event.target.closest(".tok") : null;
      const record = span ? records.get(span) : undefined;
      if (!record) {
        tip.hidden = true;
        return;
      }
      tip.replaceChildren(
        line("id", String(record.id), "tt-id"),
        line("spelling", JSON.stringify(record.spelling), "tt-spelling"),
        line("bytes", spacedHex(record.bytes_hex), "tt-bytes"),
        line("text", JSON.stringify(record.text), "tt-text")
      );
      if (record.text_start !== undefined) {
        tip.append(line("offsets", record.text_start + "–" + record.text_end, "tt-offsets"));
      }
      if (span.classList.contains("unstable")) tip.append(el("div", "tt-note", "after the stable boundary: may change"));
      const box = span.getBoundingClientRect();
      tip.hidden = false;
      tip.style.left = Math.max(4, Math.min(window.scrollX + box.left, window.scrollX + window.innerWidth - 320)) + "px";
      tip.style.top = window.scrollY + box.bottom + 6 + "px";
    });
  }

  // ---------------------------------------------------------------- interactive page

  function currentText() {
    return staticData ? staticData.text : $("text").value;
  }

  function selectedNames() {
    return Array.from(document.querySelectorAll("#tokenizers input:checked")).map((box) => box.value);
  }

  function toolTokenizer() {
    return $("tool-tokenizer").value;
  }

  function allowSpecial() {
    return $("allow-special").checked;
  }

  // Each box keeps a request counter: only the answer to its latest request is shown.
  function latestOnly(run) {
    let seq = 0;
    return async function () {
      const mine = ++seq;
      try {
        const answer = await run.request();
        if (mine === seq) run.show(answer);
      } catch (e) {
        if (mine === seq) run.fail(e instanceof Error ? e.message : String(e));
      }
    };
  }

  const encode = latestOnly({
    request() {
      const names = selectedNames();
      const text = currentText();
      $("length").textContent = Array.from(text).length + " characters";
      if (names.length === 0) return Promise.resolve({ length: Array.from(text).length, results: [], names });
      return post("/api/encode", { text, tokenizers: names, allow_special: allowSpecial() }).then((data) => {
        data.names = names;
        return data;
      });
    },
    show(data) {
      showError("encode-error", "");
      renderPanels(data, data.names);
    },
    fail(message) {
      showError("encode-error", message);
      $("panels").dataset.status = "error";
    },
  });

  const append = latestOnly({
    request() {
      const suffix = $("suffix").value;
      if (suffix === "") return Promise.resolve(null);
      return post("/api/append", {
        text: currentText(),
        suffix,
        tokenizer: toolTokenizer(),
        allow_special: allowSpecial(),
      });
    },
    show(data) {
      showError("append-error", "");
      if (data === null) {
        $("append-summary").textContent = "Type a suffix to see which tokens it re-tokenizes.";
        $("append-replaced").replaceChildren();
        $("append-tail").replaceChildren();
        return;
      }
      const kept = data.first_changed;
      $("append-summary").textContent =
        "The first " + kept + " tokens stay (" + data.stable_len + " were promised stable); " +
        data.replaced.length + " are replaced by " + data.tail.length + " (" + data.ids.length + " tokens in all).";
      renderRecords($("append-replaced"), data.replaced, kept);
      renderRecords($("append-tail"), data.tail, kept);
    },
    fail(message) {
      showError("append-error", message);
    },
  });

  const healing = latestOnly({
    request() {
      return post("/api/heal", {
        text: currentText(),
        tokenizer: toolTokenizer(),
        max_backoff: Number.parseInt($("max-backoff").value || "0", 10),
        allow_special: allowSpecial(),
      });
    },
    show(data) {
      showError("heal-error", "");
      const removed = data.removed.length;
      $("heal-summary").textContent =
        removed === 0
          ? "Nothing to heal: no token strictly extends the last tokens (" + data.allowed + " of " + data.n_vocab + " ids allowed)."
          : "Backs off " + removed + " token" + (removed === 1 ? "" : "s") + "; the output must start with " +
            JSON.stringify(data.prefix_text) + " (bytes " + spacedHex(data.prefix_hex) + "): " + data.allowed +
            " of " + data.n_vocab + " ids allowed at the first step.";
      renderRecords($("heal-removed"), data.removed, data.kept);
      renderRecords($("heal-allowed"), removed === 0 ? [] : data.allowed_sample, 0);
    },
    fail(message) {
      showError("heal-error", message);
    },
  });

  const constraint = latestOnly({
    request() {
      return post("/api/constraint", {
        tokenizer: toolTokenizer(),
        kind: $("constraint-kind").value,
        spec: $("constraint-spec").value,
        sample: $("constraint-sample").value,
      });
    },
    show(data) {
      showError("constraint-error", "");
      $("constraint-summary").textContent = data.message;
      const list = $("constraint-steps");
      list.replaceChildren();
      const scale = Math.log(data.n_vocab + 1);
      function bar(label, allowed, className, record, index) {
        const row = el("li", className);
        const token = record ? tokenSpan(record, index) : el("span", "next", label);
        if (record) token.textContent = record.text;
        row.append(token);
        const track = el("span", "track");
        const fill = el("span", "fill");
        // Counts run from 1 to the whole vocabulary: a log scale keeps both visible.
        fill.style.width = ((100 * Math.log(allowed + 1)) / scale).toFixed(1) + "%";
        track.append(fill);
        row.append(track);
        row.append(el("span", "allowed", allowed + " allowed"));
        return row;
      }
      data.steps.forEach((step, i) => {
        const className = step.accepted ? "step" : "step refused";
        list.append(bar("", step.allowed, className, step.token, i));
      });
      if (data.final_allowed !== null) {
        list.append(bar(data.can_end ? "next (may end)" : "next", data.final_allowed, "step final", null, 0));
      }
    },
    fail(message) {
      showError("constraint-error", message);
      $("constraint-steps").replaceChildren();
      $("constraint-summary").textContent = "";
    },
  });

  function setupInteractive(info) {
    const fieldset = $("tokenizers");
    const select = $("tool-tokenizer");
    info.tokenizers.forEach((name) => {
      const label = el("label", "inline");
      const box = el("input");
      box.type = "checkbox";
      box.value = name;
      box.checked = true;
      label.append(box, document.createTextNode(" " + name));
      fieldset.append(label);
      const option = el("option", "", name);
      option.value = name;
      select.append(option);
    });
    $("text").value = info.text || "";
    $("text").maxLength = info.max_chars;

    const panels = $("panels");
    const encodeSoon = debounce(encode);
    const toolsSoon = debounce(() => {
      append();
      healing();
    });
    const constraintSoon = debounce(constraint);
    function textChanged() {
      panels.dataset.status = "pending";
      encodeSoon();
      toolsSoon();
    }
    $("text").addEventListener("input", textChanged);
    fieldset.addEventListener("change", textChanged);
    $("allow-special").addEventListener("change", textChanged);
    $("suffix").addEventListener("input", toolsSoon);
    $("max-backoff").addEventListener("input", toolsSoon);
    select.addEventListener("change", () => {
      toolsSoon();
      constraintSoon();
    });
    ["constraint-kind", "constraint-spec", "constraint-sample"].forEach((id) => {
      $(id).addEventListener("input", constraintSoon);
    });
    textChanged();
    constraintSoon();
  }

  async function start() {
    setupTooltip();
    if (staticData) {
      document.querySelectorAll(".interactive").forEach((node) => {
        node.hidden = true;
      });
      const note = el("p", "muted", "A static page written by tokstream view --html: ");
      note.append(el("span", "", Array.from(staticData.text).length + " characters."));
      $("panels").before(note);
      renderPanels(staticData, staticData.results.map((r) => r.tokenizer));
      return;
    }
    try {
      const response = await fetch("/api/tokenizers");
      if (!response.ok) throw new Error("HTTP " + response.status);
      setupInteractive(await response.json());
    } catch (e) {
      showError("encode-error", "cannot reach the tokstream view server: " + (e instanceof Error ? e.message : e));
    }
  }

  start();
})();
