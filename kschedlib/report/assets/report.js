// kschedlib report: renders the embedded JSON. No network, no dependencies.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("report-data").textContent);
  var PAGE = 50;
  var PALETTE = ["#2f6fb3", "#e07b00", "#2f8132", "#b42318", "#7b3fb5", "#8d6e63",
                 "#d6409f", "#607d8b", "#a8a000", "#00a3a3", "#5c6bc0", "#ff7043"];

  function $(id) { return document.getElementById(id); }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) { for (var k in attrs) { if (Object.prototype.hasOwnProperty.call(attrs, k)) { e.setAttribute(k, attrs[k]); } } }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  function fmtInt(n) { return Number(n).toLocaleString("en-US"); }
  function fmtRes(res, v) {
    if (res === "cpu") { return (v % 1000 === 0 ? (v / 1000) : (v / 1000).toFixed(2)) + " cpu"; }
    if (res === "memory" || res === "ephemeral-storage") {
      var units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"], i = 0, x = v;
      while (Math.abs(x) >= 1024 && i < units.length - 1) { x /= 1024; i++; }
      return (Math.round(x * 10) / 10) + " " + units[i];
    }
    return fmtInt(v);
  }
  function pct(r, a) { return a > 0 ? (100 * r / a).toFixed(1) + "%" : "n/a"; }
  function heatColor(u) {
    if (u === null) { return "#d9e2ec"; }
    if (u <= 0) { return "#f7fbff"; }
    if (u > 1) { return "#4a0000"; }
    var h = 55 - 55 * u, l = 88 - 50 * u;
    return "hsl(" + h.toFixed(0) + ",90%," + l.toFixed(0) + "%)";
  }
  function plugColor(i) { return PALETTE[i % PALETTE.length]; }

  // ---------------------------------------------------------------- summary
  function renderSummary() {
    var s = D.summary;
    var cards = [
      ["pods", "pods", ""], ["scheduled", "scheduled", "ok"], ["unschedulable", "unschedulable", "bad"],
      ["preempted", "preempted (victims)", "warn"], ["preemptors", "preempting pods", ""],
      ["nodes", "nodes", ""], ["zones", "zones", ""]
    ];
    ["error", "waiting", "bindFailed", "notAttempted"].forEach(function (k) {
      if (s[k]) { cards.push([k, k, "bad"]); }
    });
    var box = $("cards");
    cards.forEach(function (c) {
      var d = el("div", {"class": "card " + c[2]});
      d.appendChild(el("div", {"class": "n", "data-testid": "sum-" + c[0], "id": "sum-" + c[0]}, fmtInt(s[c[0]])));
      d.appendChild(el("div", {"class": "l"}, c[1]));
      box.appendChild(d);
    });
    var tb = $("reasons").querySelector("tbody");
    if (!D.reasons.length) { $("reasons").classList.add("hidden"); $("no-reasons").classList.remove("hidden"); }
    D.reasons.forEach(function (r) {
      var tr = el("tr");
      tr.appendChild(el("td", null, r[0]));
      tr.appendChild(el("td", {"class": "num"}, fmtInt(r[1])));
      tr.appendChild(el("td", {"class": "num"}, fmtInt(r[2])));
      tb.appendChild(tr);
    });
    var mb = $("messages").querySelector("tbody");
    if (!D.failedMessages.length) { $("messages-box").classList.add("hidden"); }
    D.failedMessages.slice(0, 30).forEach(function (m) {
      var tr = el("tr");
      tr.appendChild(el("td", {"class": "num"}, fmtInt(m[1])));
      var td = el("td"); td.appendChild(el("div", {"class": "msg"}, D.messages[m[0]])); tr.appendChild(td);
      mb.appendChild(tr);
    });
    if (D.failedMessages.length > 30) {
      $("messages-more").textContent = (D.failedMessages.length - 30) + " more distinct messages (see the pod list)";
    }
  }

  // ---------------------------------------------------------------- utilization heat map
  var tip = null;
  function showTip(ev, text) {
    tip.textContent = text; tip.style.display = "block";
    var x = ev.clientX + 14, y = ev.clientY + 14;
    if (x + tip.offsetWidth > window.innerWidth) { x = ev.clientX - tip.offsetWidth - 10; }
    if (y + tip.offsetHeight > window.innerHeight) { y = ev.clientY - tip.offsetHeight - 10; }
    tip.style.left = x + "px"; tip.style.top = y + "px";
  }
  function hideTip() { tip.style.display = "none"; }

  function nodeText(i) {
    var N = D.nodes, lines = [N.name[i] + "  (zone " + (D.zones[N.zone[i]] || "none") + ")"];
    D.resources.forEach(function (res, j) {
      var a = N.alloc[i][j], r = N.req[i][j];
      lines.push(res + ": requested " + fmtRes(res, r) + " / allocatable " + fmtRes(res, a) + "  (" + pct(r, a) + ")");
    });
    return lines.join("\n");
  }

  function renderHeat() {
    var N = D.nodes, byZone = D.zones.map(function () { return []; });
    for (var i = 0; i < N.name.length; i++) { byZone[N.zone[i]].push(i); }
    var table = $("heat"), head = el("tr");
    head.appendChild(el("th", null, "zone"));
    D.resources.forEach(function (r) { head.appendChild(el("th", null, r)); });
    table.querySelector("thead").appendChild(head);
    var body = table.querySelector("tbody");
    var maxZone = Math.max.apply(null, byZone.map(function (z) { return z.length; }).concat([1]));
    var cell = maxZone > 1500 ? 5 : maxZone > 400 ? 7 : maxZone > 60 ? 11 : 18;
    var cols = Math.max(1, Math.min(maxZone, Math.floor(Math.min(300, 1200 / D.resources.length) / cell)));
    byZone.forEach(function (members, z) {
      var tr = el("tr");
      var th = el("th", null, (D.zones[z] || "(no zone)"));
      th.appendChild(el("div", {"class": "muted"}, fmtInt(members.length) + " nodes"));
      tr.appendChild(th);
      D.resources.forEach(function (res, j) {
        var td = el("td"), sa = 0, sr = 0;
        members.forEach(function (k) { sa += N.alloc[k][j]; sr += N.req[k][j]; });
        td.appendChild(el("div", {"class": "muted"}, pct(sr, sa) + " of " + fmtRes(res, sa)));
        var rows = Math.ceil(members.length / cols) || 1;
        var cv = el("canvas", {"width": cols * cell, "height": rows * cell});
        var ctx = cv.getContext("2d");
        members.forEach(function (k, m) {
          var a = N.alloc[k][j], r = N.req[k][j];
          ctx.fillStyle = heatColor(a > 0 ? r / a : (r > 0 ? 2 : null));
          ctx.fillRect((m % cols) * cell, Math.floor(m / cols) * cell, cell - (cell > 4 ? 1 : 0), cell - (cell > 4 ? 1 : 0));
        });
        cv.addEventListener("mousemove", function (ev) {
          var rect = cv.getBoundingClientRect();
          var cx = Math.floor((ev.clientX - rect.left) / cell), cy = Math.floor((ev.clientY - rect.top) / cell);
          var m = cy * cols + cx;
          if (cx >= 0 && cx < cols && m >= 0 && m < members.length) { showTip(ev, nodeText(members[m])); } else { hideTip(); }
        });
        cv.addEventListener("mouseleave", hideTip);
        td.appendChild(cv);
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    var lg = $("heat-legend"), lc = el("canvas", {"width": 160, "height": 10}), lx = lc.getContext("2d");
    for (var x = 0; x < 160; x++) { lx.fillStyle = heatColor(x / 159); lx.fillRect(x, 0, 1, 10); }
    lg.appendChild(el("span", null, "0%")); lg.appendChild(lc); lg.appendChild(el("span", null, "100% requested"));
  }

  // ---------------------------------------------------------------- pods (paginated)
  var podView = {rows: [], page: 0, selected: -1};
  function filterPods() {
    var q = $("pod-filter").value.trim().toLowerCase(), o = $("pod-outcome").value, P = D.pods, rows = [];
    for (var i = 0; i < P.name.length; i++) {
      if (o && P.outcome[i] !== o) { continue; }
      if (q && P.name[i].toLowerCase().indexOf(q) < 0 && P.node[i].toLowerCase().indexOf(q) < 0 &&
          D.messages[P.message[i]].toLowerCase().indexOf(q) < 0) { continue; }
      rows.push(i);
    }
    podView.rows = rows; podView.page = 0; renderPodPage();
  }
  function renderPodPage() {
    var P = D.pods, tb = $("pods-table").querySelector("tbody");
    tb.textContent = "";
    var pages = Math.max(1, Math.ceil(podView.rows.length / PAGE));
    podView.page = Math.min(podView.page, pages - 1);
    var start = podView.page * PAGE;
    podView.rows.slice(start, start + PAGE).forEach(function (i) {
      var tr = el("tr", {"data-pod": i});
      if (i === podView.selected) { tr.className = "sel"; }
      tr.appendChild(el("td", null, P.name[i]));
      var td = el("td"); td.appendChild(el("span", {"class": "pill o-" + P.outcome[i]}, P.outcome[i])); tr.appendChild(td);
      tr.appendChild(el("td", null, P.node[i] || (P.nominated[i] ? "nominated: " + P.nominated[i] : "")));
      var msg = D.messages[P.message[i]];
      tr.appendChild(el("td", {"class": "muted"}, msg.length > 140 ? msg.slice(0, 140) + "…" : msg));
      tr.addEventListener("click", function () { selectPod(i); });
      tb.appendChild(tr);
    });
    $("pod-count").textContent = fmtInt(podView.rows.length) + (podView.rows.length === 1 ? " pod" : " pods");
    $("pod-page").textContent = "page " + (podView.page + 1) + " / " + pages;
  }
  function selectPod(i) {
    podView.selected = i; renderPodPage(); renderDetail(i);
  }

  function scoreChart(scores) {
    // Stacked horizontal bars: one bar per top node, one segment per plugin's weighted score.
    var NS = "http://www.w3.org/2000/svg", rowH = 22, labelW = 170, barW = 380;
    var max = 1;
    scores.forEach(function (s) {
      var sum = 0; s[2].forEach(function (p) { sum += Math.max(0, p[2] * p[3]); });
      max = Math.max(max, sum, s[1]);
    });
    var svg = document.createElementNS(NS, "svg");
    svg.setAttribute("width", labelW + barW + 60); svg.setAttribute("height", scores.length * rowH + 4);
    svg.setAttribute("role", "img");
    scores.forEach(function (s, r) {
      var y = r * rowH + 2, t = document.createElementNS(NS, "text");
      t.setAttribute("x", 0); t.setAttribute("y", y + 15); t.setAttribute("font-size", "12");
      t.textContent = s[0].length > 24 ? s[0].slice(0, 23) + "…" : s[0];
      svg.appendChild(t);
      var x = labelW;
      s[2].forEach(function (p) {
        var w = Math.max(0, p[2] * p[3]) / max * barW;
        if (w <= 0) { return; }
        var rect = document.createElementNS(NS, "rect");
        rect.setAttribute("x", x); rect.setAttribute("y", y + 3); rect.setAttribute("width", w); rect.setAttribute("height", rowH - 6);
        rect.setAttribute("fill", plugColor(p[0]));
        var title = document.createElementNS(NS, "title");
        title.textContent = D.plugins[p[0]] + ": raw " + p[1] + " → normalized " + p[2] + " × weight " + p[3] + " = " + (p[2] * p[3]);
        rect.appendChild(title); svg.appendChild(rect); x += w;
      });
      var tot = document.createElementNS(NS, "text");
      tot.setAttribute("x", x + 6); tot.setAttribute("y", y + 15); tot.setAttribute("font-size", "12");
      tot.textContent = String(s[1]); svg.appendChild(tot);
    });
    return svg;
  }

  function renderDetail(i) {
    var P = D.pods, box = $("pod-detail"), e = D.explanations[i];
    box.textContent = "";
    box.appendChild(el("h3", null, P.name[i]));
    var line = el("div");
    line.appendChild(el("span", {"class": "pill o-" + P.outcome[i]}, P.outcome[i]));
    if (P.node[i]) { line.appendChild(document.createTextNode(" on " + P.node[i])); }
    if (P.nominated[i]) { line.appendChild(document.createTextNode(" — nominated to " + P.nominated[i])); }
    box.appendChild(line);
    var msg = D.messages[P.message[i]];
    if (msg) { box.appendChild(el("h4", null, "FailedScheduling")); box.appendChild(el("div", {"class": "msg"}, msg)); }
    if (!e) { box.appendChild(el("p", {"class": "muted"}, "No explanation was recorded for this pod.")); renderPreemptedBy(box, P.name[i]); return; }
    box.appendChild(el("p", {"class": "muted"}, "profile " + e.profile + " · " + fmtInt(e.feasible) + " feasible node(s)" +
      (e.scored ? " · " + fmtInt(e.scored) + " scored" : "") + (e.fastPath ? " · nominated-node fast path" : "")));
    if (e.preFilter) {
      box.appendChild(el("h4", null, "PreFilter rejected the pod"));
      box.appendChild(el("div", {"class": "msg"}, (e.preFilter[0] || "-") + " (" + e.preFilter[1] + "): " + e.preFilter[2]));
    }
    if (e.rejected.length) {
      box.appendChild(el("h4", null, "Filtered out"));
      var t = el("table"), h = el("tr");
      ["plugin", "code", "reason", "nodes"].forEach(function (c, k) { h.appendChild(el("th", k === 3 ? {"class": "num"} : null, c)); });
      t.appendChild(h);
      e.rejected.forEach(function (g) {
        var tr = el("tr");
        tr.appendChild(el("td", null, g[0] || "-"));
        tr.appendChild(el("td", null, g[1]));
        var td = el("td", null, g[2]);
        td.appendChild(el("div", {"class": "nodes"}, g[4].join(", ") + (g[3] > g[4].length ? " … and " + fmtInt(g[3] - g[4].length) + " more" : "")));
        tr.appendChild(td);
        tr.appendChild(el("td", {"class": "num"}, fmtInt(g[3])));
        t.appendChild(tr);
      });
      box.appendChild(t);
    }
    if (e.scores.length) {
      box.appendChild(el("h4", null, "Score breakdown (top " + e.scores.length + " nodes, weighted)"));
      box.appendChild(scoreChart(e.scores));
      var used = {};
      e.scores.forEach(function (s) { s[2].forEach(function (p) { used[p[0]] = true; }); });
      var lg = el("div", {"class": "legend"});
      Object.keys(used).map(Number).sort(function (a, b) { return a - b; }).forEach(function (k) {
        var s = el("span"); s.appendChild(el("span", {"class": "swatch", "style": "background:" + plugColor(k)}));
        s.appendChild(document.createTextNode(D.plugins[k])); lg.appendChild(s);
      });
      box.appendChild(lg);
      var st = el("table"), sh = el("tr");
      sh.appendChild(el("th", null, "node")); sh.appendChild(el("th", null, "plugin: raw → normalized × weight")); sh.appendChild(el("th", {"class": "num"}, "total"));
      st.appendChild(sh);
      e.scores.forEach(function (s) {
        var tr = el("tr");
        tr.appendChild(el("td", null, s[0]));
        tr.appendChild(el("td", {"class": "nodes"}, s[2].map(function (p) { return D.plugins[p[0]] + " " + p[1] + "→" + p[2] + "×" + p[3]; }).join("; ")));
        tr.appendChild(el("td", {"class": "num"}, s[1]));
        st.appendChild(tr);
      });
      box.appendChild(st);
    }
    if (e.postFilter) { box.appendChild(el("h4", null, "PostFilter")); box.appendChild(el("div", {"class": "msg"}, e.postFilter)); }
    renderPreemptedBy(box, P.name[i]);
  }

  // Attempts of this pod that preempted (its last attempt may be the one that bound it).
  var preemptionsByPod = null;
  function renderPreemptedBy(box, name) {
    if (preemptionsByPod === null) {
      preemptionsByPod = {};
      D.preemptions.forEach(function (p) { (preemptionsByPod[p.pod] = preemptionsByPod[p.pod] || []).push(p); });
    }
    (preemptionsByPod[name] || []).forEach(function (p) {
      box.appendChild(el("h4", null, "Earlier attempt: preempted " + p.victims.length + " pod(s) on " + p.node));
      box.appendChild(el("div", {"class": "nodes"}, "victims: " + p.victims.join(", ")));
      if (D.messages[p.message]) { box.appendChild(el("div", {"class": "msg"}, D.messages[p.message])); }
    });
  }

  function renderPods() {
    var sel = $("pod-outcome"), outcomes = {};
    D.pods.outcome.forEach(function (o) { outcomes[o] = (outcomes[o] || 0) + 1; });
    Object.keys(outcomes).sort().forEach(function (o) { sel.appendChild(el("option", {"value": o}, o + " (" + outcomes[o] + ")")); });
    var timer = null;
    $("pod-filter").addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(filterPods, 150); });
    sel.addEventListener("change", filterPods);
    $("pod-prev").addEventListener("click", function () { if (podView.page > 0) { podView.page--; renderPodPage(); } });
    $("pod-next").addEventListener("click", function () { podView.page++; renderPodPage(); });
    filterPods();
    // Open the first pod that did not schedule (the interesting one), else the first pod.
    var first = D.pods.outcome.findIndex(function (o) { return o !== "Scheduled"; });
    if (first < 0 && D.pods.name.length) { first = 0; }
    if (first >= 0) { selectPod(first); }
  }

  // ---------------------------------------------------------------- preemptions and devices
  function pagedTable(rows, tbody, pagerId, renderRow) {
    var page = 0, pages = Math.max(1, Math.ceil(rows.length / PAGE)), pager = $(pagerId);
    function draw() {
      tbody.textContent = "";
      rows.slice(page * PAGE, page * PAGE + PAGE).forEach(function (r) { tbody.appendChild(renderRow(r)); });
      label.textContent = "page " + (page + 1) + " / " + pages + " · " + fmtInt(rows.length) + " rows";
    }
    var prev = el("button", null, "‹ prev"), next = el("button", null, "next ›"), label = el("span", {"class": "muted"});
    prev.addEventListener("click", function () { if (page > 0) { page--; draw(); } });
    next.addEventListener("click", function () { if (page < pages - 1) { page++; draw(); } });
    if (rows.length > PAGE) { pager.appendChild(prev); pager.appendChild(next); }
    pager.appendChild(label);
    draw();
  }
  function renderPreemptions() {
    if (!D.preemptions.length) { $("preemptions-table").classList.add("hidden"); $("no-preemptions").classList.remove("hidden"); return; }
    pagedTable(D.preemptions, $("preemptions-table").querySelector("tbody"), "preemptions-pager", function (p) {
      var tr = el("tr");
      tr.appendChild(el("td", null, p.pod)); tr.appendChild(el("td", null, p.node));
      tr.appendChild(el("td", {"class": "num"}, p.victims.length)); tr.appendChild(el("td", {"class": "nodes"}, p.victims.join(", ")));
      return tr;
    });
  }
  function renderDevices() {
    if (!D.devices.length) { return; }
    $("devices").classList.remove("hidden"); $("nav-devices").classList.remove("hidden");
    pagedTable(D.devices, $("devices-table").querySelector("tbody"), "devices-pager", function (d) {
      var tr = el("tr");
      [d.claim, d.request, d.driver, d.pool, d.device, d.node, d.reservedFor.join(", ")].forEach(function (v) { tr.appendChild(el("td", null, v)); });
      return tr;
    });
    var use = D.deviceUtilization || [];
    if (!use.length) { return; }
    $("device-use-box").classList.remove("hidden");
    pagedTable(use, $("device-use").querySelector("tbody"), "device-use-pager", function (u) {
      var tr = el("tr");
      tr.appendChild(el("td", null, u.node));
      tr.appendChild(el("td", {"class": "num"}, fmtInt(u.devicesAllocated)));
      tr.appendChild(el("td", {"class": "num"}, fmtInt(u.devicesPublished)));
      tr.appendChild(el("td", {"class": "num"}, pct(u.devicesAllocated, u.devicesPublished)));
      return tr;
    });
  }

  function main() {
    tip = $("tip");
    document.title = D.title;
    $("title").textContent = D.title;
    renderSummary();
    renderHeat();
    renderPods();
    renderPreemptions();
    renderDevices();
    document.body.setAttribute("data-ready", "1");
  }
  main();
})();
