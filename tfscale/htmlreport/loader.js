// The report carries plotly.js and its big tables gzip-compressed (base64): a 10,000-record report stays a few
// MB. They are unpacked here with the browser's DecompressionStream (Chromium 80+, Firefox 113+, Safari 16.4+).
(function () {
  function gunzip(b64) {
    var raw = atob(b64.trim()), bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text();
  }
  function note(text) {
    var p = document.createElement("p");
    p.className = "loaderror";
    p.textContent = text;
    document.body.insertBefore(p, document.body.firstChild);
  }
  function drawFigures() {
    document.querySelectorAll("script.figure-data").forEach(function (data) {
      var target = document.getElementById(data.dataset.for), figure = JSON.parse(data.textContent);
      Plotly.newPlot(target, figure.data, figure.layout, {responsive: true});
    });
  }
  function cellHtml(tr, text, key, longCell) {
    var td = document.createElement("td");
    td.textContent = text;
    if (text.length > longCell) td.title = text;  // rows are one line: a cut cell shows its whole text on hover
    td.dataset.sort = key;
    tr.appendChild(td);
  }
  function bigTable(holder, spec) {
    var state = {page: 0, size: 100, column: -1, ascending: true, filter: ""}, rows = spec.rows;
    var bar = document.createElement("div"), table = document.createElement("table"), info = document.createElement("span");
    var filter = document.createElement("input"), prev = document.createElement("button"), next = document.createElement("button");
    filter.placeholder = "filter rows"; prev.textContent = "previous"; next.textContent = "next";
    bar.className = "pager"; [filter, prev, next, info].forEach(function (e) { bar.appendChild(e); });
    table.className = "sortable";
    var head = table.createTHead().insertRow(), body = table.createTBody();
    spec.columns.forEach(function (name, column) {
      var th = document.createElement("th");
      th.textContent = name;
      th.addEventListener("click", function () {
        state.ascending = state.column === column ? !state.ascending : true;
        state.column = column; state.page = 0; render();
        head.querySelectorAll("th").forEach(function (h) { h.classList.remove("asc", "desc"); });
        th.classList.add(state.ascending ? "asc" : "desc");
      });
      head.appendChild(th);
    });
    function visible() {
      var shown = rows;
      if (state.filter) {
        var f = state.filter.toLowerCase();
        shown = shown.filter(function (r) { return r.text.join(" ").toLowerCase().indexOf(f) >= 0; });
      }
      if (state.column >= 0) {
        var c = state.column;
        shown = shown.slice().sort(function (a, b) {
          var x = a.key[c], y = b.key[c];
          if (x === "" && y !== "") return 1;
          if (y === "" && x !== "") return -1;
          var nx = parseFloat(x), ny = parseFloat(y);
          var cmp = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
          return state.ascending ? cmp : -cmp;
        });
      }
      return shown;
    }
    function render() {
      var shown = visible(), pages = Math.max(1, Math.ceil(shown.length / state.size));
      state.page = Math.min(state.page, pages - 1);
      body.textContent = "";
      shown.slice(state.page * state.size, (state.page + 1) * state.size).forEach(function (r) {
        var tr = body.insertRow();
        if (r.bad) tr.className = "bad";
        r.text.forEach(function (text, i) { cellHtml(tr, text, r.key[i], spec.long_cell); });
      });
      info.textContent = " rows " + (shown.length ? state.page * state.size + 1 : 0) + "-" +
        Math.min(shown.length, (state.page + 1) * state.size) + " of " + shown.length;
    }
    filter.addEventListener("input", function () { state.filter = filter.value; state.page = 0; render(); });
    prev.addEventListener("click", function () { state.page = Math.max(0, state.page - 1); render(); });
    next.addEventListener("click", function () { state.page += 1; render(); });
    holder.textContent = "";
    holder.appendChild(bar);
    holder.appendChild(table);
    render();
  }
  if (typeof DecompressionStream === "undefined") {
    note("This browser cannot unpack the report's compressed plots and tables (it lacks DecompressionStream): " +
         "open it in Chromium 80+, Firefox 113+ or Safari 16.4+.");
    return;
  }
  gunzip(document.getElementById("plotlyjs-gz").textContent).then(function (code) {
    var script = document.createElement("script");
    script.textContent = code;
    document.head.appendChild(script);
    drawFigures();
  }).catch(function (error) { note("plots could not be drawn: " + error); });
  document.querySelectorAll("script.table-data").forEach(function (data) {
    gunzip(data.textContent).then(function (text) {
      bigTable(document.getElementById(data.dataset.for), JSON.parse(text));
    }).catch(function (error) { note("a table could not be unpacked: " + error); });
  });
})();
