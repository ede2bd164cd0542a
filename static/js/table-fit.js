/* SessionLab: Plotly tables sized to their rows. The server can only guess a table's height (its
   text wraps at a width it does not know), so a figure is drawn at the server's height, generous or not, and
   then this reads back what Plotly settled: each column's widest unbreakable text, each rendered row's height
   (the cells' rects), and relays the figure out so that every table shows all its rows, its last one a few
   pixels above the bottom of its area: no empty band, no row cut inside a scroll area, no header spilling
   into the next column. Tables beside or under a plot keep the plot's own height; the figure grows or
   shrinks by what its tables need. An ES module, no build step, no inline script (CSP). */

const CELL_PAD = 8;  // Plotly's table cell padding, left and right (its constants' cellPad)
const SLACK_PX = 4;  // kept under a table's last row (its borders, Plotly's scroll "uplift")
const SAME_PX = 2;   // a relayout closer than this to the figure as it is changes nothing
const TABLE_MARGIN_PX = 10;  // under a table that ends its figure
const ROUNDS = 6;    // rounds at one width: the widths once, the heights (twice where rows were not all
                     // rendered), one to check; never a loop

function attr(element, name) { return parseFloat(element.getAttribute(name)) || 0; }

// The table traces' indices in gd.data, in the order Plotly draws their g.table groups.
function tableTraces(gd) {
  return (gd._fullData || []).filter(function (trace) {
    return trace.type === "table" && trace.visible !== false;
  }).map(function (trace) { return trace.index; });
}

// A table's blocks of its first column: the header block and the (at most two) rendered blocks of rows.
function blocks(table) {
  const column = table.querySelector("g.y-column");
  const all = column ? Array.from(column.querySelectorAll("g.column-block")) : [];
  const isHeader = function (block) { return block.__data__ ? block.__data__.type === "header" : false; };
  return { header: all.filter(isHeader), cells: all.filter(function (b) { return !isHeader(b); }) };
}

function rowHeights(block) {
  return Array.from(block.querySelectorAll("g.column-cell > rect.cell-rect")).map(function (rect) {
    return attr(rect, "height");
  });
}

// The column widths (px) that keep every rendered cell's text inside its column, or null when it already
// is. A line wider than its column is one word (Plotly wraps at spaces): its column takes that width, and
// the others give it back in proportion to the room they have above their own widest single word.
function columnWidths(table) {
  const columns = Array.from(table.querySelectorAll("g.y-column"));
  const widths = columns.map(function (column) {
    const rect = column.querySelector("rect.cell-rect");
    return rect ? attr(rect, "width") : 0;
  });
  let spills = false;
  const least = columns.map(function (column, i) {
    let widest = 0;
    column.querySelectorAll("text.cell-text").forEach(function (text) {
      const lines = text.querySelectorAll("tspan.line");
      (lines.length ? Array.from(lines) : [text]).forEach(function (line) {
        const words = line.textContent.trim();
        const width = line.getComputedTextLength();
        if (width + 2 * CELL_PAD > widths[i] + 0.5) { spills = true; }
        if (words && words.indexOf(" ") === -1) { widest = Math.max(widest, width); }
      });
    });
    return Math.ceil(widest + 2 * CELL_PAD + 2);
  });
  if (!spills) { return null; }
  const total = widths.reduce(function (a, b) { return a + b; }, 0);
  const wanted = widths.map(function (width, i) { return Math.max(width, least[i]); });
  let excess = wanted.reduce(function (a, b) { return a + b; }, 0) - total;
  const room = wanted.map(function (width, i) { return widths[i] >= least[i] ? width - least[i] : 0; });
  const spare = room.reduce(function (a, b) { return a + b; }, 0);
  if (excess > 0 && spare >= excess) {
    return wanted.map(function (width, i) { return width - room[i] * (excess / spare); });
  }
  // Too narrow for every column's widest word: each column in proportion to it (the least spilling there is).
  return excess > 0 ? least : wanted;
}

// What a table needs, in px: its header and every row. Rows Plotly has not rendered (beyond its two blocks)
// are counted at the tallest rendered row's height: generous, and the next round measures them.
function tableNeed(gd, table, index) {
  const parts = blocks(table);
  const header = parts.header.reduce(function (sum, block) {
    return sum + rowHeights(block).reduce(function (a, b) { return a + b; }, 0);
  }, 0);
  const rendered = parts.cells.reduce(function (all, block) { return all.concat(rowHeights(block)); }, []);
  const values = (gd._fullData[index].cells || {}).values || [];
  const rows = values.length ? Math.max.apply(null, values.map(function (column) { return column.length; })) : 0;
  const tallest = rendered.length ? Math.max.apply(null, rendered) : 20;
  const missing = Math.max(0, rows - rendered.length);
  return header + rendered.reduce(function (a, b) { return a + b; }, 0) + missing * tallest + SLACK_PX;
}

// The figure's vertical pieces in px from the plot area's top: its tables (sized to `need`) and its
// cartesian y axes (kept as tall as they are). Pieces that overlap vertically share a band: a table beside
// a plot (the statistics card) sits at the band's top; a band is as tall as its tallest piece. The gaps
// between bands (where an axis keeps its tick labels and title) keep their size in px.
function relayout(gd, needs, marginB) {  // needs: Map of trace index to px; marginB: the figure's own
  const size = gd._fullLayout._size;
  const height = size.h;
  const pieces = [];
  needs.forEach(function (need, index) {
    const y = gd._fullData[index].domain.y;
    pieces.push({ table: index, top: (1 - y[1]) * height, bottom: (1 - y[0]) * height, need: need });
  });
  Object.keys(gd._fullLayout).filter(function (key) { return /^yaxis\d*$/.test(key); }).forEach(function (key) {
    const axis = gd._fullLayout[key];
    if (!axis || !axis.domain || !(gd._fullLayout._subplots.yaxis || []).includes(axis._id)) { return; }
    pieces.push({ axis: key, top: (1 - axis.domain[1]) * height, bottom: (1 - axis.domain[0]) * height });
  });
  pieces.sort(function (a, b) { return a.top - b.top; });
  const bands = [];
  pieces.forEach(function (piece) {
    const band = bands[bands.length - 1];
    if (band && piece.top < band.bottom - 1) {
      band.pieces.push(piece);
      band.bottom = Math.max(band.bottom, piece.bottom);
    } else {
      bands.push({ top: piece.top, bottom: piece.bottom, pieces: [piece] });
    }
  });
  let at = 0;
  let previous = 0;
  bands.forEach(function (band) {
    at += band.top - previous;  // the gap above it, as it was
    previous = band.bottom;
    let tall = 0;
    band.pieces.forEach(function (piece) {
      const offset = piece.table === undefined ? piece.top - band.top : 0;
      piece.newTop = at + offset;
      piece.newHeight = piece.table === undefined ? piece.bottom - piece.top : piece.need;
      tall = Math.max(tall, offset + piece.newHeight);
    });
    at += tall;
  });
  const plotHeight = at + (height - previous);
  // The bottom margin holds an axis's tick labels and title; where a table ends the figure instead, the
  // margin would be an empty band under it: it shrinks to TABLE_MARGIN_PX, and comes back with the axis.
  const axisAtBottom = pieces.some(function (piece) {
    return piece.table === undefined && piece.newTop + piece.newHeight >= plotHeight - 1;
  });
  const margin = gd._fullLayout.margin.b;
  const wantedMargin = axisAtBottom ? marginB : Math.min(marginB, TABLE_MARGIN_PX);
  const changed = Math.abs(wantedMargin - margin) > SAME_PX || pieces.some(function (piece) {
    return Math.abs(piece.newTop - piece.top) > SAME_PX ||
      Math.abs(piece.newHeight - (piece.bottom - piece.top)) > SAME_PX;
  });
  if (!changed || plotHeight < 1) { return null; }
  const domain = function (piece) {
    const top = 1 - piece.newTop / plotHeight;
    const bottom = 1 - (piece.newTop + piece.newHeight) / plotHeight;
    return [Math.max(0, Math.min(1, bottom)), Math.max(0, Math.min(1, top))];
  };
  // autosize kept on: Plotly turns it off when a relayout sets the height, and the figure would then keep
  // its width when the window changes (responsive: true).
  const layout = {
    height: Math.round(gd._fullLayout.height - height + plotHeight - margin + wantedMargin),
    autosize: true,
    "margin.b": wantedMargin,
  };
  const traces = [];
  const domains = [];
  pieces.forEach(function (piece) {
    if (piece.table !== undefined) {
      traces.push(piece.table);
      domains.push({ x: gd._fullData[piece.table].domain.x.slice(), y: domain(piece) });
    } else {
      layout[piece.axis + ".domain"] = domain(piece);
    }
  });
  return { layout: layout, traces: traces, domains: domains };
}

// One round: widen the columns whose text spills (once per width: the rows' heights change with the widths,
// so that round stops there), else size the tables to their rows. Resolves true when it changed the figure
// (another round follows).
function fitRound(gd, state) {
  const indices = tableTraces(gd);
  const tables = Array.from(gd.querySelectorAll("g.table"));
  if (!indices.length || tables.length !== indices.length) { return Promise.resolve(false); }
  const widths = state.widened === state.width ? [] : tables.map(columnWidths);
  state.widened = state.width;
  if (widths.some(function (w) { return w; })) {
    const traces = [];
    const columnwidth = [];
    widths.forEach(function (w, i) { if (w) { traces.push(indices[i]); columnwidth.push(w); } });
    return Plotly.restyle(gd, { columnwidth: columnwidth }, traces).then(function () { return true; });
  }
  const needs = new Map(tables.map(function (table, i) { return [indices[i], tableNeed(gd, table, indices[i])]; }));
  const change = relayout(gd, needs, state.marginB);
  if (!change) { return Promise.resolve(false); }
  return Plotly.update(gd, { domain: change.domains }, change.layout, change.traces).then(function () {
    return true;
  });
}

function nextFrame() {
  return new Promise(function (resolve) {
    window.requestAnimationFrame(function () { window.requestAnimationFrame(resolve); });
  });
}

// Fit gd's tables now and after every redraw (a resize, a re-plot with other filters). gd.dataset.tablesFit
// is "1" once its tables are sized (the browser tests wait for it).
export function fitTables(gd) {
  if (!gd._tableFit) {
    gd._tableFit = { width: 0, widened: null, rounds: 0, busy: false };
    gd.on("plotly_afterplot", function () { schedule(gd); });
  }
  gd._tableFit.rounds = 0;
  gd._tableFit.widened = null;  // a new figure: its columns as the server gave them
  const margin = gd.layout.margin || {};
  gd._tableFit.marginB = typeof margin.b === "number" ? margin.b : 80;  // Plotly's default
  schedule(gd);
}

function schedule(gd) {
  const state = gd._tableFit;
  if (state.busy) { return; }
  const width = gd._fullLayout ? gd._fullLayout.width : 0;
  if (width !== state.width) { state.width = width; state.rounds = 0; state.widened = null; }
  if (state.rounds >= ROUNDS) { gd.dataset.tablesFit = "1"; return; }
  state.busy = true;
  state.rounds += 1;
  delete gd.dataset.tablesFit;
  nextFrame().then(function () { return fitRound(gd, state); }).then(function (changed) {
    state.busy = false;
    if (changed) { schedule(gd); } else { gd.dataset.tablesFit = "1"; }
  }, function () {
    state.busy = false;
    gd.dataset.tablesFit = "1";
  });
}
