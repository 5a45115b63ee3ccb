// loci web view: live rows on the workspaces page. The page works without this
// script; with it, the rows the server sends (`row`: a workspace's row as the page
// renders it; `gone`: its id) replace the page's own as a run makes progress.
(function () {
  "use strict";
  var body = document.querySelector("tbody[data-live]");
  if (!body || !window.EventSource) {
    return;
  }
  var status = document.getElementById("live-status");
  var count = document.querySelector("caption [data-count]");
  var source = new EventSource(body.getAttribute("data-live"));

  function say(text) {
    if (status) {
      status.textContent = text;
    }
  }

  function counted() {
    if (count) {
      count.textContent = String(body.querySelectorAll("tr[data-ws]").length);
    }
  }

  // The row of workspace `id` on this page, if any.
  function rowOf(id) {
    return body.querySelector('tr[data-ws="' + String(Number(id)) + '"]');
  }

  source.addEventListener("open", function () {
    document.documentElement.setAttribute("data-live", "on");
  });

  source.addEventListener("row", function (e) {
    var row = JSON.parse(e.data);
    var made = document.createElement("template");
    made.innerHTML = row.html;
    var fresh = made.content.firstElementChild;
    if (!fresh) {
      return;
    }
    var old = rowOf(row.id);
    // The stream starts with every row: only a row that reads differently is news.
    var news = !old || old.textContent !== fresh.textContent;
    if (old) {
      // Keep the keyboard where it was: the same link of the new row takes the focus.
      var links = Array.prototype.slice.call(old.querySelectorAll("a"));
      var focused = links.indexOf(document.activeElement);
      old.replaceWith(fresh);
      var again = fresh.querySelectorAll("a")[focused];
      if (focused >= 0 && again) {
        again.focus();
      }
    } else {
      body.appendChild(fresh);
    }
    counted();
    if (news) {
      say(row.says);
    }
  });

  source.addEventListener("gone", function (e) {
    var old = rowOf(e.data);
    if (old) {
      old.remove();
      counted();
    }
  });

  source.addEventListener("error", function () {
    document.documentElement.setAttribute("data-live", "off");
    if (source.readyState === EventSource.CLOSED) {
      say("Live updates stopped: reload the page to see the current state.");
    }
  });
})();
