// Small behaviours without inline scripts: copy buttons, print links, the viewer's evidence.
(function () {
  "use strict";

  function copyText(button) {
    var target = document.querySelector(button.getAttribute("data-copy"));
    if (!target) { return; }
    var status = button.closest(".share-box") && button.closest(".share-box").querySelector("[data-copy-status]");
    var done = function () { if (status) { status.textContent = "Link copied."; } };
    target.select();
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(target.value).then(done, function () {
        document.execCommand("copy"); done();
      });
    } else {
      document.execCommand("copy"); done();
    }
  }

  document.addEventListener("click", function (event) {
    var copy = event.target.closest("[data-copy]");
    if (copy) { event.preventDefault(); copyText(copy); return; }
    var print = event.target.closest("[data-print]");
    if (print) { event.preventDefault(); window.print(); }
  });

  // The viewer: bring the evidence into view below the sticky citation, once.
  document.addEventListener("DOMContentLoaded", function () {
    var mark = document.getElementById("highlight");
    if (mark && !window.location.hash) { mark.scrollIntoView({block: "center"}); }
  });

  // The viewer's page regions (IIIF): a region image that cannot load is taken away, and the
  // text below stays the evidence. Errors are caught as they happen and, for images that
  // failed before this script ran, when the page is ready.
  function dropRegion(image) {
    var figure = image.closest("[data-iiif-region]");
    if (!figure) { return; }
    figure.hidden = true;
    var section = figure.closest(".page-regions");
    if (section && !section.querySelector("[data-iiif-region]:not([hidden])")) { section.hidden = true; }
  }
  document.addEventListener("error", function (event) {
    if (event.target.matches && event.target.matches("[data-iiif-region] img")) { dropRegion(event.target); }
  }, true);
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-iiif-region] img").forEach(function (image) {
      if (image.complete && image.naturalWidth === 0) { dropRegion(image); }
    });
  });
}());

// The ask page: warn when a date lies outside the archive's range.
(function () {
  "use strict";
  function check() {
    var warning = document.querySelector("[data-date-warning]");
    if (!warning) { return; }
    var outside = [];
    document.querySelectorAll("input[data-archive-first]").forEach(function (input) {
      var first = input.getAttribute("data-archive-first");
      var last = input.getAttribute("data-archive-last");
      if (input.value && (input.value < first || input.value > last)) { outside.push(input.value); }
    });
    warning.hidden = outside.length === 0;
    warning.textContent = outside.length ? "Outside the archive's dates: " + outside.join(", ") +
      ". Nothing dated there can be found." : "";
  }
  document.addEventListener("input", function (event) {
    if (event.target.matches && event.target.matches("input[data-archive-first]")) { check(); }
  });
  document.addEventListener("DOMContentLoaded", check);
}());

// The review page: drag an accepted source onto another to give it that rank (the same request
// as typing the rank and pressing Move).
(function () {
  "use strict";
  var dragged = null;
  function sourceAt(target) {
    return target && target.closest ? target.closest("#ranked article.source") : null;
  }
  document.addEventListener("dragstart", function (event) {
    var source = sourceAt(event.target);
    if (!source || source.getAttribute("draggable") !== "true") { return; }
    dragged = source;
    event.dataTransfer.effectAllowed = "move";
    event.dataTransfer.setData("text/plain", source.getAttribute("data-document"));
  });
  document.addEventListener("dragover", function (event) {
    if (dragged && sourceAt(event.target)) { event.preventDefault(); }
  });
  document.addEventListener("drop", function (event) {
    var over = sourceAt(event.target);
    var moving = dragged;
    dragged = null;
    if (!moving || !over || over === moving) { return; }
    event.preventDefault();
    var rank = over.querySelector("input[name=rank]");
    var form = moving.querySelector("form.move");
    if (!rank || !form) { return; }
    form.querySelector("input[name=rank]").value = rank.defaultValue;
    form.querySelector("button.move-to").click();
  });
  document.addEventListener("dragend", function () { dragged = null; });
}());

// The review page's timeline: on a narrow screen the image shrinks to the page's width and its
// image map's circles shrink with it (coordinates are the drawing's pixels).
(function () {
  "use strict";
  function fit() {
    document.querySelectorAll(".timeline-figure img[usemap]").forEach(function (image) {
      var drawn = parseInt(image.getAttribute("width"), 10);
      var map = document.querySelector("map[name='" + image.getAttribute("usemap").slice(1) + "']");
      if (!drawn || !map || !image.clientWidth) { return; }
      var scale = image.clientWidth / drawn;
      map.querySelectorAll("area").forEach(function (area) {
        if (!area.hasAttribute("data-coords")) { area.setAttribute("data-coords", area.getAttribute("coords")); }
        area.setAttribute("coords", area.getAttribute("data-coords").split(",").map(function (value) {
          return Math.round(parseInt(value, 10) * scale);
        }).join(","));
      });
    });
  }
  document.addEventListener("DOMContentLoaded", fit);
  window.addEventListener("load", fit);
  window.addEventListener("resize", fit);
}());
