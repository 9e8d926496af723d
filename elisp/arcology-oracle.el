;;; arcology-oracle.el --- Similar notes, questions and conversations over org-roam -*- lexical-binding: t -*-

;; Copyright (C) 2026 The arcology-oracle authors

;; Author: The arcology-oracle authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1"))
;; Keywords: outlines, hypermedia, convenience
;; URL: https://github.com/arcology-oracle/arcology-oracle

;; This file is not part of GNU Emacs.

;; This program is free software; you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;; This program is distributed in the hope that it will be useful,
;; but WITHOUT ANY WARRANTY; without even the implied warranty of
;; MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
;; GNU General Public License for more details.

;; You should have received a copy of the GNU General Public License
;; along with this program.  If not, see <https://www.gnu.org/licenses/>.

;;; Commentary:

;; The Emacs client of the arcology-oracle daemon, which indexes an
;; org-roam directory heading by heading and answers over HTTP.
;;
;; - `arcology-oracle-similar-mode' keeps a side window listing the
;;   notes similar to the heading at point.
;; - `arcology-oracle-similar-section' shows the same list in the
;;   org-roam buffer: add it to `org-roam-mode-sections'.
;; - `arcology-oracle-ask' and `arcology-oracle-ask-region' ask a
;;   question about the current buffer; the answer streams into an
;;   org buffer, followed by its sources as id: links.
;; - `arcology-oracle-summarize' summarizes the node at point.
;; - `arcology-oracle-converse' answers the conversation subtree at
;;   point with a new heading; `arcology-oracle-discard' removes it.
;; - `arcology-oracle-suggest-links' lists the notes the note at point
;;   does not link to yet, with the paragraph each link belongs in; i
;;   in the similar notes inserts a link to the note at point.
;; - `arcology-oracle-search' offers search results through
;;   `completing-read'.
;; - `arcology-oracle-gptel-backend' points gptel at the daemon;
;;   `arcology-oracle-gptel-add-tools' lets any gptel model search and
;;   read the notes itself.
;;
;; Every request is asynchronous: nothing here waits for the daemon.
;; When the daemon is down or answers with an error, a short message
;; appears in the echo area.  The daemon's lifecycle belongs to systemd
;; (or whatever runs it), not to Emacs.

;;; Code:

;; The package is in parts, each with one job, those using the options
;; below requiring this file; the end of this file loads them all (a
;; part that loads smaller parts of its own names them):
;;
;; - arcology-oracle-user-error.el, loaded first: commands' refusals;
;; - arcology-oracle-echo.el, loaded next: messages in whole words;
;; - arcology-oracle-http.el: the non-blocking HTTP client, which
;;   loads its own parts: -token (the URL and token), -instance (which
;;   daemon process answers), -http-parse (reading responses),
;;   -http-errors (reporting failures);
;; - arcology-oracle-notes.el: the notes as the parts see them, which
;;   loads its own parts: -privacy (private text), -roam-dir (the
;;   daemon's roam directory here), -context (the heading at point),
;;   -results (a result as listed), -listed-note (the note a list is
;;   about), -windows (where buffers show), -visit (visiting notes);
;; - arcology-oracle-similar.el: the side window following point, its
;;   buffer in arcology-oracle-similar-buffer.el, its place by the
;;   frame's width in arcology-oracle-similar-place.el;
;; - arcology-oracle-similar-section.el: the org-roam section;
;; - arcology-oracle-answers.el: the answers and summaries buffers;
;; - arcology-oracle-ask.el: asking about a buffer, the answer streamed
;;   in (or stopped) by arcology-oracle-answer-stream.el;
;; - arcology-oracle-summarize.el: summarizing the node at point;
;; - arcology-oracle-converse.el: conversations, discarding answers;
;; - arcology-oracle-search.el: search through `completing-read';
;; - arcology-oracle-links.el: link suggestions, their buffer in
;;   arcology-oracle-links-buffer.el, a link's place in the note in
;;   arcology-oracle-link-place.el;
;; - arcology-oracle-similar-links.el: linking a similar note;
;; - arcology-oracle-rejections.el: rejected suggestions, taken back;
;; - arcology-oracle-gptel.el: the gptel tools, loading the backend of
;;   arcology-oracle-gptel-backend.el;
;; - arcology-oracle-memory.el: memorizing and forgetting, where the
;;   text came from in arcology-oracle-memory-source.el;
;; - arcology-oracle-make-private.el: making a heading private.
;;
;; Optional libraries: org-roam (visiting by ID, the org-roam section),
;; magit-section (the org-roam section) and gptel.  None is required.
;; Org itself comes with Emacs 28.1 (Org 9.5).

(require 'cl-lib)
(require 'arcology-oracle-user-error)
(require 'arcology-oracle-echo)

(declare-function arcology-oracle-similar-show "arcology-oracle-similar" ())
(declare-function arcology-oracle-similar-mode "arcology-oracle-similar" (&optional arg))
(declare-function arcology-oracle-ask "arcology-oracle-ask" (question &optional beg end))
(declare-function arcology-oracle-ask-region "arcology-oracle-ask" (question beg end))
(declare-function arcology-oracle-summarize "arcology-oracle-summarize" (&optional question))
(declare-function arcology-oracle-converse "arcology-oracle-converse" ())
(declare-function arcology-oracle-discard "arcology-oracle-converse" ())
(declare-function arcology-oracle-stop "arcology-oracle-answer-stream" ())
(declare-function arcology-oracle-visit-cited-source "arcology-oracle-visit" ())
(declare-function arcology-oracle-search "arcology-oracle-search" (query))
(declare-function arcology-oracle-search-results "arcology-oracle-search" ())
(declare-function arcology-oracle-suggest-links "arcology-oracle-links" ())
(declare-function arcology-oracle-link-rejections "arcology-oracle-rejections" (&optional all))
(declare-function arcology-oracle-memorize "arcology-oracle-memory"
                  (text &optional title tags callback source role file line))
(declare-function arcology-oracle-make-private "arcology-oracle-make-private" ())
(declare-function arcology-oracle-forget "arcology-oracle-memory" ())

;;; Options

(defgroup arcology-oracle nil
  "Similar notes, questions and conversations over an org-roam directory."
  :group 'org
  :prefix "arcology-oracle-"
  :link '(url-link "https://github.com/arcology-oracle/arcology-oracle"))

(defcustom arcology-oracle-url "http://127.0.0.1:7348"
  "Base URL of the arcology-oracle daemon.
For example \"http://127.0.0.1:7348\" (the daemon's default), or
\"https://notes.example.ts.net\" for a daemon behind a TLS proxy.
A path after the host is kept as a prefix of every route."
  :type 'string
  :group 'arcology-oracle)

(defcustom arcology-oracle-token nil
  "Bearer token sent to the daemon, or how to find it.
nil looks the token up with `auth-source', using the host and port
of `arcology-oracle-url', for example this line in ~/.authinfo.gpg:

  machine 127.0.0.1 port 7348 password s3cr3t

A string is the token itself; a function is called with no
arguments and returns the token (or nil for none)."
  :type '(choice (const :tag "Look it up with auth-source" nil)
                 (string :tag "Token")
                 (function :tag "Function returning the token"))
  :group 'arcology-oracle)

(defcustom arcology-oracle-timeout 15
  "Seconds of silence from the daemon after which an index request fails.
Index requests are search, similar notes and node look-ups; they
should take milliseconds.  Every request, questions included, also
fails when its connection has not opened within this many seconds
\(a host that drops packets would keep it waiting for minutes).
For example 15."
  :type 'number
  :group 'arcology-oracle)

(defcustom arcology-oracle-llm-timeout 300
  "Seconds of silence after which a question, summary or conversation fails.
These wait for the language model, which may first have to load,
so the default is generous: 300 seconds.  Connecting waits
`arcology-oracle-timeout' at most."
  :type 'number
  :group 'arcology-oracle)

(defcustom arcology-oracle-result-count 10
  "How many similar notes or search results to ask for, for example 10."
  :type 'natnum
  :group 'arcology-oracle)

(defcustom arcology-oracle-weak-score 0.1
  "Relevances under this mark a similar note or suggestion as weak.
A relevance, the number a list shows, is the chance that you would
link the two notes (the daemon's score, made to agree with the
list's order): of the pairs scoring under 0.1, about 1 in 20 were
linked (README, \"What a score means\").  Weak ones are shown
dimmed, marked \"weak\".
0 marks none."
  :type 'number
  :group 'arcology-oracle)

(defcustom arcology-oracle-idle-delay 0.5
  "Seconds of idle time before the similar notes follow point.
After point moves to another heading, `arcology-oracle-similar-mode'
waits this long before asking the daemon, for example 0.5."
  :type 'number
  :group 'arcology-oracle)

(defcustom arcology-oracle-roam-directory nil
  "The daemon's roam directory as seen from this Emacs, or nil.
nil asks the daemon (GET /status) and falls back on
`org-roam-directory'.  Set it when the daemon sees the notes under
another path, for example \"~/org/roam/\" for a daemon that reads
the same directory mounted as /srv/roam.  The daemon's /status is
read either way: a daemon restarted on other notes than the ones it
served when this was set is refused until this is set again."
  :type '(choice (const :tag "Ask the daemon" nil) directory)
  :group 'arcology-oracle)

(defcustom arcology-oracle-similar-display-action
  '(display-buffer-in-side-window (side . right) (slot . 0) (window-width . 0.3))
  "The `display-buffer' action showing the similar notes buffer.
The default: a side window on the right, 30% of the frame wide (on
a narrow frame, see `arcology-oracle-similar-min-frame-width'); this
\\='(display-buffer-in-side-window (side . bottom) (window-height . 10))
puts it at the bottom."
  :type '(cons (choice function (repeat function))
               (alist :key-type symbol :value-type sexp))
  :group 'arcology-oracle)

(defcustom arcology-oracle-result-display-action
  '(display-buffer-in-side-window (side . bottom) (slot . 0) (window-height . 0.35))
  "The `display-buffer' action showing answers, summaries and link suggestions.
The default is a side window at the bottom, a third of the frame
high, so that the note being read keeps its window; for example
\\='(display-buffer-in-side-window (side . right) (slot . 1)) puts
them on the right, below the similar notes."
  :type '(cons (choice function (repeat function))
               (alist :key-type symbol :value-type sexp))
  :group 'arcology-oracle)

(defcustom arcology-oracle-similar-exclude-linked nil
  "Non-nil leaves out of the similar notes the notes already linked.
For example t to see only notes you have not linked yet."
  :type 'boolean
  :group 'arcology-oracle)

(defcustom arcology-oracle-model nil
  "Chat model used for questions, summaries and conversations.
nil lets the daemon use its configured model; for example
\"llama3.2\"."
  :type '(choice (const :tag "The daemon's default" nil) string)
  :group 'arcology-oracle)

(defcustom arcology-oracle-ask-max-chars 24000
  "Most characters of the buffer sent along with a question.
Longer buffers are cut to this many characters around point; for
example 24000 (roughly 6000 tokens)."
  :type 'natnum
  :group 'arcology-oracle)

(defcustom arcology-oracle-conversation-tag "conversation"
  "Tag that marks the root heading of a conversation.
`arcology-oracle-converse' sends the nearest heading with this tag
\(or, without one, the top-level heading) around point.  For
example \"chat\"."
  :type 'string
  :group 'arcology-oracle)

(defcustom arcology-oracle-gptel-models '("llama3.2+notes")
  "Models offered by `arcology-oracle-gptel-backend' before the daemon answers.
The backend replaces this list with the daemon's GET /api/tags
answer when that arrives.  For example \\='(\"llama3.2+notes\")."
  :type '(repeat string)
  :group 'arcology-oracle)

(defcustom arcology-oracle-gptel-tool-max-chars 8000
  "Most characters of a note tool's answer to a model.
The gptel tools of `arcology-oracle-gptel-tools' cut longer
answers (a long note, many results) and say how much is left out.
For example 8000 (roughly 2000 tokens)."
  :type 'natnum
  :group 'arcology-oracle)

(defface arcology-oracle-title '((t :inherit bold))
  "Face of a note's title in the similar notes."
  :group 'arcology-oracle)

(defface arcology-oracle-olp '((t :inherit shadow))
  "Face of a heading's outline path in the similar notes."
  :group 'arcology-oracle)

(defface arcology-oracle-score '((t :inherit font-lock-constant-face))
  "Face of a result's relevance, the number a list shows."
  :group 'arcology-oracle)

(defface arcology-oracle-tag '((t :inherit font-lock-comment-face))
  "Face of the marks of a result: linked, oracle, conversation."
  :group 'arcology-oracle)

(defface arcology-oracle-snippet '((t :inherit default))
  "Face of the snippet under each similar note."
  :group 'arcology-oracle)

;;; Key bindings

;;;###autoload
(defvar arcology-oracle-command-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "s") #'arcology-oracle-similar-show)
    (define-key map (kbd "m") #'arcology-oracle-similar-mode)
    (define-key map (kbd "a") #'arcology-oracle-ask)
    (define-key map (kbd "r") #'arcology-oracle-ask-region)
    (define-key map (kbd "u") #'arcology-oracle-summarize)
    (define-key map (kbd "c") #'arcology-oracle-converse)
    (define-key map (kbd "o") #'arcology-oracle-visit-cited-source)
    (define-key map (kbd "d") #'arcology-oracle-discard)
    (define-key map (kbd "f") #'arcology-oracle-search)
    (define-key map (kbd "F") #'arcology-oracle-search-results)
    (define-key map (kbd "l") #'arcology-oracle-suggest-links)
    (define-key map (kbd "L") #'arcology-oracle-link-rejections)
    (define-key map (kbd "M") #'arcology-oracle-memorize)
    (define-key map (kbd "K") #'arcology-oracle-forget)
    (define-key map (kbd "k") #'arcology-oracle-stop)
    (define-key map (kbd "P") #'arcology-oracle-make-private)
    map)
  "Keymap of the arcology-oracle commands, to bind under a prefix.
For example (global-set-key (kbd \"C-c o\") arcology-oracle-command-map).")
;;;###autoload
(fset 'arcology-oracle-command-map arcology-oracle-command-map)

(provide 'arcology-oracle)

;;; Parts

(defun arcology-oracle--part-being-loaded (directory)
  "Return the outermost part in DIRECTORY being required or loaded now, or nil.
A part requires this file before its own `provide', and so may the
parts it requires on the way: those files are still loading when
this one is.  Their names are read from the `require' and `load'
calls on the stack."
  (let (part)
    (mapbacktrace
     (lambda (_evald function args _flags)
       (let ((name (pcase function
                     ('require (and (symbolp (car args)) (symbol-name (car args))))
                     ((or 'load 'load-with-code-conversion)
                      (and (stringp (car args))
                           (file-name-sans-extension (file-name-nondirectory (car args))))))))
         (when (and name (string-prefix-p "arcology-oracle-" name)
                    (locate-file name (list directory) '(".el" ".elc")))
           (setq part (intern name))))))
    part))

(defmacro arcology-oracle--after-the-part-being-loaded (&rest body)
  "Run BODY now, or once the part being loaded, if one is, has loaded.
See `arcology-oracle--part-being-loaded': BODY, requiring the parts,
run while a part is loading would load that part again, nested,
when another part requires it (it is not provided yet), and so run
its top-level forms twice."
  (declare (indent 0))
  `(let ((part (and load-file-name
                    (arcology-oracle--part-being-loaded (file-name-directory load-file-name)))))
     (if (not part)
         (progn ,@body)
       (letrec ((after (lambda (_file)
                         (when (featurep part)
                           (remove-hook 'after-load-functions after)
                           ,@body))))
         (add-hook 'after-load-functions after)))))

;; After `provide', so that each part's (require 'arcology-oracle)
;; finds this file loaded; not at compile time, when the parts are not
;; needed; when a part required alone required this file, once that
;; part has loaded, so that no file loads twice.  A new part adds one
;; line here.
(cl-eval-when (load eval)
  (arcology-oracle--after-the-part-being-loaded
    (require 'arcology-oracle-http)
    (require 'arcology-oracle-notes)
    (require 'arcology-oracle-similar)
    (require 'arcology-oracle-similar-section)
    (require 'arcology-oracle-answers)
    (require 'arcology-oracle-answer-stream)
    (require 'arcology-oracle-ask)
    (require 'arcology-oracle-summarize)
    (require 'arcology-oracle-converse)
    (require 'arcology-oracle-search)
    (require 'arcology-oracle-links)
    (require 'arcology-oracle-similar-links)
    (require 'arcology-oracle-rejections)
    (require 'arcology-oracle-gptel)
    (require 'arcology-oracle-memory)
    (require 'arcology-oracle-make-private)))

;;; arcology-oracle.el ends here
