"""The in-lab app's pages (Jinja templates rendered by :mod:`annotation.webapp`): the frame, the login, an item,
a practice item, messages, and the page script that keeps each item's running time.
"""

from __future__ import annotations

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ title }}</title>
<style>
 body { font-family: sans-serif; max-width: 52em; margin: 2em auto; line-height: 1.45; }
 .sentence { display: block; padding: 4px 6px; border-radius: 4px; }
 label.sentence { cursor: pointer; } label.sentence:hover { background: #eef; }
 .opening { color: #555; padding-left: 30px; }
 .pair { display: flex; gap: 1.5em; } .pair > div { flex: 1; border: 1px solid #ccc; padding: .5em 1em; }
 .progress { color: #555; } kbd { border: 1px solid #aaa; border-radius: 3px; padding: 0 4px; }
 .instructions { border: 1px solid #bbb; border-radius: 4px; padding: 0 1em; background: #fafafa; }
 .notice { color: #a00; } .feedback { border-left: 4px solid #36a; padding-left: .8em; }
</style></head><body>
{{ body|safe }}
</body></html>
"""

LOGIN = """<h1>Annotation study</h1>
{% if instructions %}<div class="instructions" id="instructions">{{ instructions|safe }}</div>{% endif %}
<form method="post" action="{{ url_for('login') }}" autocomplete="off">
 <input type="hidden" name="csrf" value="{{ csrf }}">
 <p><label>Your name (letters, digits, . _ -): <input id="annotator" name="annotator" required autocomplete="off"
    pattern="[A-Za-z0-9][A-Za-z0-9_.\\-]{0,39}" autofocus></label></p>
 {% if error %}<p id="error" class="notice">{{ error }}</p>{% endif %}
 <p><button id="start" type="submit">Start</button></p>
</form>"""

DONE = """<h1 id="done">All {{ total }} items answered</h1><p>Thank you, {{ name }}. You can close this window.</p>
<p><a id="review" href="{{ url_for('item', name=name, number=1) }}">Review or change your answers</a></p>"""

MESSAGE = """<h1>{{ heading }}</h1><p id="message" class="notice">{{ message }}</p>
{% if link %}<p><a id="continue" href="{{ link }}">{{ link_text }}</a></p>{% endif %}"""

CHOICES = """
 {% if kind == 'intruder' %}
  {% for s in item.sentences %}
   {% if loop.first %}<span class="sentence opening" id="sentence-1">1. {{ s }}</span>
   {% else %}<label class="sentence" id="sentence-{{ loop.index }}"><input type="radio" name="answer"
      autocomplete="off" id="choice-{{ loop.index }}" value="{{ loop.index0 }}" required> {{ loop.index }}. {{ s }}</label>{% endif %}
  {% endfor %}
  <label class="sentence"><input type="radio" name="answer" autocomplete="off" id="choice-none" value="-1"> {{ none_label }}</label>
  <p class="progress">Keys: <kbd>2</kbd>-<kbd>9</kbd> a sentence, <kbd>0</kbd> or <kbd>n</kbd> none of the above,
   <kbd>Enter</kbd> next.</p>
 {% else %}
  <div class="pair">{% for text in item.texts %}<div><h3>Text {{ "AB"[loop.index0] }}</h3>
   {% for s in text %}<span class="sentence">{{ s }}</span>{% endfor %}</div>{% endfor %}</div>
  <label class="sentence"><input type="radio" name="answer" autocomplete="off" id="choice-a" value="0" required> Text A is the original</label>
  <label class="sentence"><input type="radio" name="answer" autocomplete="off" id="choice-b" value="1"> Text B is the original</label>
  <p class="progress">Keys: <kbd>a</kbd> or <kbd>b</kbd>, <kbd>Enter</kbd> next.</p>
 {% endif %}
"""

SCRIPT = """<script>
 var shown = performance.now(), form = document.getElementById("answer-form"), sent = false;
 // the item's seconds: every moment its page was shown, over every visit (a reload, a refused answer, a
 // correction later), kept in this browser's storage under the item; the answer carries the total
 var store = null, slot = "incoherent-seconds|" + form.getAttribute("action") + "|" +
   (form.elements.item_id ? form.elements.item_id.value : "");
 try { store = window.localStorage; } catch (e) { store = null; }
 var before = store ? (parseFloat(store.getItem(slot)) || 0) : 0;
 function total() { return before + (performance.now() - shown) / 1000; }
 function keep() { if (store) { try { store.setItem(slot, total().toFixed(3)); } catch (e) {} } }
 // never a value the annotator did not choose: clear anything the browser restored
 form.reset();
 window.addEventListener("pageshow", function (e) { if (e.persisted) { location.reload(); } });
 window.addEventListener("pagehide", function () { if (!sent) keep(); });
 form.addEventListener("submit", function () {
   sent = true;
   keep();
   document.getElementById("seconds").value = total().toFixed(3);
 });
 document.addEventListener("keydown", function (e) {
   var key = e.key.toLowerCase(), box = null;
   if (key === "enter") { e.preventDefault(); if (form.reportValidity()) form.requestSubmit(); return; }
   if (key === "0" || key === "n") box = document.getElementById("choice-none");
   else if (key === "a" || key === "b") box = document.getElementById("choice-" + key);
   else if (/^[2-9]$/.test(key)) box = document.getElementById("choice-" + key);
   if (box) { box.checked = true; e.preventDefault(); }
 });
</script>"""

ITEM = (
    """<p class="progress" id="progress">{{ name }} · item {{ number }} of {{ total }} ({{ done }} answered)
{% if skipped %}<span id="skipped" class="notice"> · {{ skipped }} unreadable line(s) of your answers file skipped</span>{% endif %}</p>
{% if previous %}<p id="earlier" class="feedback">You answered this item: <strong id="previous">{{ previous }}</strong>.
 Choose again to change your answer, or <a id="resume" href="{{ url_for('work', name=name) }}">{% if next_number %}go on with item {{ next_number }}{% else %}go back to the end{% endif %}</a>.</p>{% endif %}
<p><strong>{{ question }}</strong></p>
<form id="answer-form" method="post" action="{{ url_for('item', name=name, number=number) }}" autocomplete="off">
 <input type="hidden" name="csrf" value="{{ csrf }}">
 <input type="hidden" name="task_id" value="{{ task_id }}">
 <input type="hidden" name="item_id" value="{{ item.item_id }}">
 <input type="hidden" name="correction" value="{{ 1 if previous else 0 }}">
 <input type="hidden" name="seconds" id="seconds" value="">
"""
    + CHOICES
    + """
 <p>{% if number > 1 %}<a id="back" href="{{ url_for('item', name=name, number=number - 1) }}">&larr; previous item</a> {% endif %}
 <button id="submit" type="submit">{{ "Change answer" if previous else "Next" }}</button></p>
</form>
"""
    + SCRIPT
)

PRACTICE = (
    """<p class="progress" id="progress">{{ name }} · practice item {{ number }} of {{ total }} (not counted)</p>
<p><strong>{{ question }}</strong></p>
{% if feedback %}<div class="feedback" id="feedback"><p>Your answer: <strong id="given">{{ given }}</strong>.
 The right answer: <strong id="right">{{ right }}</strong>.{% if given == right %} Well done.{% endif %}</p>
 <p><a id="next" href="{{ url_for('work', name=name) }}">{{ "Start the study" if number == total else "Next practice item" }}</a>
  <span class="progress">(<kbd>Enter</kbd>)</span></p></div>
<script>
 document.addEventListener("keydown", function (e) {
   if (e.key === "Enter") { e.preventDefault(); document.getElementById("next").click(); }
 });
</script>
{% for s in (item.sentences if kind == 'intruder' else []) %}<span class="sentence{{ ' opening' if loop.first }}">{{ loop.index }}. {{ s }}</span>{% endfor %}
{% if kind != 'intruder' %}<div class="pair">{% for text in item.texts %}<div><h3>Text {{ "AB"[loop.index0] }}</h3>
 {% for s in text %}<span class="sentence">{{ s }}</span>{% endfor %}</div>{% endfor %}</div>{% endif %}
{% else %}<form id="answer-form" method="post" action="{{ url_for('practice', name=name, number=number) }}" autocomplete="off">
 <input type="hidden" name="csrf" value="{{ csrf }}">
 <input type="hidden" name="item_id" value="{{ item.item_id }}">
 <input type="hidden" name="seconds" id="seconds" value="">
"""
    + CHOICES
    + """ <p><button id="submit" type="submit">Check</button></p>
</form>
"""
    + SCRIPT
    + "{% endif %}"
)
