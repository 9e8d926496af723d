;;; arcology-oracle-ask.el --- Ask, summarize, converse and search with arcology-oracle -*- lexical-binding: t -*-

;; Copyright (C) 2026 The arcology-oracle authors

;; Author: The arcology-oracle authors
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

;; The commands that ask the language model through the daemon, and
;; search: `arcology-oracle-ask' and `arcology-oracle-ask-region' stream
;; an answer into an org buffer followed by its sources as id: links,
;; `arcology-oracle-summarize' does the same for the node at point,
;; `arcology-oracle-converse' answers the conversation subtree at point
;; with a new heading (`arcology-oracle-discard' removes it), and
;; `arcology-oracle-search' offers the notes found through
;; `completing-read'.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'subr-x)
(require 'org)
(require 'arcology-oracle-notes)
(require 'arcology-oracle-answers)

;;; Ask

(defvar arcology-oracle--ask-history nil
  "Questions asked with `arcology-oracle-ask'.")

(defun arcology-oracle--format-sources (sources)
  "Return an org list of SOURCES as numbered links, or nil when empty.
Each link carries its source as the `arcology-oracle-source' text
property, so that following it opens the source's heading (see
`arcology-oracle--open-source-at-point').  A window of dialogue is
followed by its speakers and date."
  (when sources
    (mapconcat (lambda (s)
                 (let ((link (arcology-oracle--source-link s))
                       (speakers (alist-get 'speakers s)))
                   (format "- [%s] %s%s\n" (or (alist-get 'n s) "?")
                           (propertize link 'arcology-oracle-source s)
                           (if (> (length speakers) 0)
                               (format " (%s%s)" (mapconcat #'identity speakers ", ")
                                       (if (alist-get 'date s) (concat ", " (alist-get 'date s)) ""))
                             ""))))
               sources "")))

(defun arcology-oracle--answer-meta (event)
  "Return the line saying when, with which model and dates EVENT was answered.
EVENT is the daemon's `sources' event: its `model', `date_range'
and `cached' (summaries) fields, each when present."
  (let* ((range (alist-get 'date_range event))
         (parts (delq nil
                      (list (format-time-string (org-time-stamp-format t t))
                            (alist-get 'model event)
                            (when range
                              (format "dates %s to %s%s"
                                      (or (alist-get 'since range) "…")
                                      (or (alist-get 'until range) "…")
                                      (if-let ((expr (alist-get 'expression range)))
                                          (format " (%s)" expr) "")))
                            (when (eq (alist-get 'cached event) t)
                              "cached: the note is unchanged since it was summarized")))))
    (concat (mapconcat #'identity parts " · ") "\n\n")))

(defvar arcology-oracle--answering nil
  "The answers still to come, as functions: each stops one.
See `arcology-oracle-stop'.")

(defun arcology-oracle--answering (stop)
  "Note STOP, a function stopping an answer to come.
Return a function that forgets it, once the answer is in."
  (push stop arcology-oracle--answering)
  (lambda () (setq arcology-oracle--answering (delq stop arcology-oracle--answering))))

(defun arcology-oracle--answer-with-roam-dir (callback on-stop &optional errback)
  "Call CALLBACK with the roam directory, for an answer to come.
As `arcology-oracle--with-roam-dir' (ERRBACK on failure), but the
first request of a session asks the daemon for the directory
before the answer is asked for: `arcology-oracle-stop' meanwhile
calls ON-STOP, and CALLBACK never runs, so nothing is sent."
  (let* ((stopped nil)
         (forget (arcology-oracle--answering (lambda () (setq stopped t) (funcall on-stop)))))
    (arcology-oracle--with-roam-dir
     (lambda (roam-dir)
       (funcall forget)
       (unless stopped (funcall callback roam-dir)))
     (lambda (message)
       (funcall forget)
       (unless stopped (funcall (or errback #'arcology-oracle--report) message))))))

;;;###autoload
(defun arcology-oracle-stop ()
  "Stop the answers still to come: questions, summaries and conversations.
Their connections close, so the daemon stops the model.  An answer
cut short keeps what it has so far, then \"[Stopped]\" and its
sources; a conversation gets no answer."
  (interactive)
  (let ((stops arcology-oracle--answering))
    (setq arcology-oracle--answering nil)
    (mapc #'funcall stops)
    (message (if stops
                 (format "Stopped %d answer%s" (length stops) (if (cdr stops) "s" ""))
               "No answer is coming"))))

(defun arcology-oracle--stream-answer (marker path payload)
  "POST PAYLOAD to PATH and stream the answer in at MARKER, then its sources.
Failures are reported and noted in the buffer; `arcology-oracle-stop'
ends it.  Until the daemon's first line, MARKER shows that the answer
is awaited and how to stop it (a model may take a minute to load;
the daemon says nothing before it starts): shown only, not text of
the buffer.  Returns the request state."
  (let ((sources nil)
        (used nil)
        (started nil)
        (failed nil)
        (req nil)
        (forget #'ignore)
        (waiting (arcology-oracle--waiting-note marker)))
    (cl-flet ((finish ()
                (funcall forget)
                (arcology-oracle--insert-following
                 marker (cond ((eq failed 'stopped) "\n\n[Stopped]")
                              (failed (format "\n\n[Failed: %s]" failed))
                              (t "")))
                ;; The window following the answer stays on it, the sources
                ;; below: following them to the end scrolled the answer out of
                ;; a small window (Emacs recentred on the last line).
                (arcology-oracle--insert-following
                 marker (concat "\n\n** Sources\n"
                                (or (arcology-oracle--format-sources sources)
                                    ;; Used, then made private or deleted before
                                    ;; the answer began: the daemon names none.
                                    (if used
                                        "- none: the notes used have left the index since (made private or deleted)\n"
                                      "- none: no notes were relevant enough\n")))
                 t)
                (set-marker marker nil)))
      (setq forget (arcology-oracle--answering
                    (lambda ()
                      (delete-overlay waiting)
                      (arcology-oracle--http-cancel req)
                      (if started
                          (progn (setq failed 'stopped) (finish))
                        (arcology-oracle--insert-following marker "[Stopped]\n")
                        (set-marker marker nil)))))
      (setq
       req
       (arcology-oracle--ndjson
       "POST" path :json payload :timeout arcology-oracle-llm-timeout
       :on-event
       (lambda (event)
         (delete-overlay waiting)
         (pcase (alist-get 'type event)
           ("sources" (setq sources (alist-get 'sources event)
                            used (alist-get 'used_notes event)
                            started t)
            (arcology-oracle--insert-following marker (arcology-oracle--answer-meta event)))
           ("token" (when-let ((text (alist-get 'text event)))
                      (arcology-oracle--insert-following marker text)))
           ("error" (setq failed (or (alist-get 'message event) "the daemon failed"))
            (arcology-oracle--report failed))))
       :on-done
       (lambda ()
         (delete-overlay waiting)
         (if started
             (finish)
           ;; Every answer of the daemon starts with its sources: a stream that
           ;; ended without them was no answer (its lines unreadable), though it
           ;; read as one with "- none: no notes were relevant enough".
           (funcall forget)
           (arcology-oracle--answer-failed
            marker (if (stringp failed) failed "the daemon sent no answer that could be read"))))
       :errback
       (lambda (message)
         (delete-overlay waiting)
         (if (not started)
             (progn (funcall forget) (arcology-oracle--answer-failed marker message))
           ;; Cut off mid-answer (the daemon killed, the network gone, the
           ;; timeout): the text so far cites [N], so its sources still follow,
           ;; and the failure is a paragraph of its own, as a daemon's error is.
           (unless failed
             (arcology-oracle--report message)
             (setq failed message))
           (finish))))))))

(defun arcology-oracle--waiting-note (marker)
  "Show at MARKER that an answer is awaited; return the overlay showing it."
  (let ((overlay (make-overlay marker marker (marker-buffer marker))))
    (overlay-put overlay 'after-string
                 (propertize (substitute-command-keys
                              (concat "Waiting for the answer… (\\<arcology-oracle-answers-keys-mode-map>"
                                      "\\[arcology-oracle-stop] stops it)\n"))
                             'face 'shadow))
    overlay))

(defun arcology-oracle--answer-failed (marker message)
  "End the answer at MARKER with the failure MESSAGE, and show MESSAGE.
A daemon not reached was asked nothing: the entry keeps the question
and says so, and how to ask again once the daemon runs, rather than
a bare \"[Failed: ...]\"."
  (arcology-oracle--report message)
  (if (not (arcology-oracle--unreachable-p message))
      (arcology-oracle--insert-following marker (format "[Failed: %s]\n" message))
    ;; Marked so that the question asked again replaces this entry
    ;; (`arcology-oracle--drop-not-asked').  MESSAGE says how to start
    ;; the daemon (`arcology-oracle--http-unreachable').
    (arcology-oracle--insert-following
     marker (propertize
             (concat "Not asked: " message ", then "
                     (substitute-command-keys
                      "\\<arcology-oracle-answers-keys-mode-map>\\[arcology-oracle-answers-again]")
                     " here asks again.\n")
             'arcology-oracle-not-asked t)))
  (set-marker marker nil))

(defun arcology-oracle--buffer-excerpt (beg end)
  "Return the text between BEG and END, cut around point when too long.
Its private parts are left out: each part (the text before the first
heading, then each heading to the next) that
`arcology-oracle--private-here-p' says is private where it starts.
Cut out of the buffer, an excerpt starting inside a private subtree
would no longer say that it is private."
  (let* ((max arcology-oracle-ask-max-chars)
         (start (if (<= (- end beg) max) beg (max beg (min (- (point) (/ max 2)) (- end max)))))
         (stop (min end (+ start max)))
         (parts nil))
    (save-excursion
      (goto-char start)
      (while (< (point) stop)
        (let* ((from (point))
               (to (min stop (progn (outline-next-heading) (point)))))
          (unless (arcology-oracle--private-here-p from)
            (push (buffer-substring-no-properties from to) parts))
          (goto-char (max to (1+ from))))))
    (apply #'concat (nreverse parts))))

(defun arcology-oracle--saved-file ()
  "Return the file the current buffer visits, if saved; else nil.
The daemon reads files from disk, so an unsaved buffer is sent as
text only."
  (let ((file (arcology-oracle--visited-file)))
    (and file (not (buffer-modified-p)) file)))

(defconst arcology-oracle--private-ask-prompt
  "Ask (this part is private: the question alone is sent): "
  "The prompt of a question asked in a private part, which sends nothing of it.")

;;;###autoload
(defun arcology-oracle-ask (question &optional beg end)
  "Ask QUESTION about the current buffer, grounded in your notes.
With BEG and END, ask about that part of the buffer only.  Nothing
of the buffer is sent when point (or BEG) is in a private part (see
`arcology-oracle--private-here-p'): the question alone.  The
answer streams into the `arcology-oracle-answer-buffer-name'
buffer, followed by its sources as id: links.  Returns at once.
There, \\<arcology-oracle-answers-keys-mode-map>\\[arcology-oracle-answers-again] \
on the answer asks QUESTION again about this
buffer (its text as it is then) and \\[arcology-oracle-answers-follow] \
comes back here."
  (interactive
   (list (read-string (let ((note (or (arcology-oracle--listed-note)
                                      (arcology-oracle--refuse-list-without-note))))
                        (cond (note (format "Ask about %s: " (buffer-name note)))
                              ((arcology-oracle--private-here-p) arcology-oracle--private-ask-prompt)
                              (t "Ask about this buffer: ")))
                      nil 'arcology-oracle--ask-history)))
  (when (string-blank-p question) (arcology-oracle--user-error "Empty question"))
  (unless (and (not beg)
               (arcology-oracle--in-listed-note (lambda () (arcology-oracle-ask question))))
    (arcology-oracle--ask-here question beg end)))

(defun arcology-oracle--ask-here (question beg end)
  "Ask QUESTION about the current buffer (BEG to END), as `arcology-oracle-ask'."
  (let* ((text (unless (arcology-oracle--private-here-p (or beg (point)))
                 ;; Cut out of the buffer, a private part no longer says it is private.
                 (save-restriction
                   (widen)
                   (arcology-oracle--buffer-excerpt (or beg (point-min)) (or end (point-max))))))
         (file (arcology-oracle--saved-file))
         (line (line-number-at-pos nil t))
         ;; Saved or not: where the daemon looks for the setup files the text names.
         (visiting (arcology-oracle--visited-file))
         (origin (arcology-oracle--origin))
         (beg (and beg (copy-marker beg)))
         (end (and end (copy-marker end t)))
         (entry (list :origin origin)))
    (setq entry (plist-put entry :again
                           (lambda ()
                             (arcology-oracle--in-origin
                              origin (lambda () (arcology-oracle-ask question beg end))
                              (lambda () (arcology-oracle--ask-send question text file line visiting entry))))))
    (arcology-oracle--ask-send question text file line visiting entry)))

(defun arcology-oracle--ask-send (question text file line visiting entry)
  "Ask QUESTION about TEXT (from FILE, saved, at LINE) into a new answer.
VISITING is the file the buffer visits, saved or not: the daemon
looks for the setup files TEXT names beside it.  ENTRY is the
answer's record (see `arcology-oracle--answer-start')."
  (let ((marker (arcology-oracle--answer-start question nil nil entry)))
    (arcology-oracle--answer-with-roam-dir
     (lambda (roam-dir)
       (let ((rel (arcology-oracle--relative-file file roam-dir))
             (visiting-rel (arcology-oracle--relative-file visiting roam-dir)))
         (arcology-oracle--stream-answer
          marker "/ask"
          `((question . ,question)
            (buffer . ,text)
            ,@(when rel `((file . ,rel) (line . ,line)))
            ,@(when visiting-rel `((visiting . ,visiting-rel)))
            ,@(when arcology-oracle-model `((model . ,arcology-oracle-model)))
            (stream . t)))))
     (lambda ()
       (arcology-oracle--insert-following marker "[Stopped]\n")
       (set-marker marker nil))
     (lambda (message) (arcology-oracle--answer-failed marker message)))))

;;;###autoload
(defun arcology-oracle-ask-region (question beg end)
  "Ask QUESTION about the region from BEG to END, grounded in your notes."
  (interactive
   (if (use-region-p)
       (list (read-string (if (arcology-oracle--private-here-p (region-beginning))
                              arcology-oracle--private-ask-prompt
                            "Ask about the region: ")
                          nil 'arcology-oracle--ask-history)
             (region-beginning) (region-end))
     (arcology-oracle--user-error "No active region")))
  (arcology-oracle-ask question beg end))

;;;; Summaries

;;;###autoload
(defun arcology-oracle-summarize (&optional question)
  "Summarize the org-roam node at point, or its file.
The node is the nearest heading with an ID, at point or above it,
else the file's node; without one, the whole file, when it is among
the daemon's notes.  The summary's heading names what was
summarized.  With a prefix argument, read a QUESTION to focus the
summary on.  The summary streams into the
`arcology-oracle-summary-buffer-name' buffer, followed by its
sources; earlier summaries stay below it, newest first, each saying
when and with which model it was made, and whether the daemon had
it cached.  Returns at once.  There,
\\<arcology-oracle-answers-keys-mode-map>\\[arcology-oracle-answers-again] \
on a summary summarizes the same heading again and
\\[arcology-oracle-answers-follow] goes back to it.

The daemon summarizes notes as they are saved: a buffer with no
file, a file never saved, or one without a node at point that has
unsaved edits, is refused \(save it first), as are a buffer that is
not in Org mode and a node that is one of the oracle's answers, and
a private node (see `arcology-oracle--private-here-p'), which the
daemon never reads.
Nothing refused is added to the summaries."
  (interactive
   (list (when (and current-prefix-arg (not (arcology-oracle--refuse-list-without-note)))
           (read-string "Focus the summary on: " nil 'arcology-oracle--ask-history))))
  (unless (arcology-oracle--in-listed-note (lambda () (arcology-oracle-summarize question)))
    (arcology-oracle--summarize-here question)))

(defun arcology-oracle--summarize-here (question)
  "Summarize the node at point (on QUESTION), as `arcology-oracle-summarize'."
  (unless (derived-mode-p 'org-mode)
    (arcology-oracle--user-error "Summaries need an org-mode buffer"))
  (let* ((node (arcology-oracle--node-at-point))
         (id (car node))
         (file (arcology-oracle--visited-file))
         (title (arcology-oracle--title-text (or (cdr node) (arcology-oracle--file-title))))
         (question (and question (not (string-blank-p question)) question))
         (origin nil)
         (entry nil))
    (cond
     ((and file (not (file-exists-p file)))
      (arcology-oracle--missing-file-error
       file "Save %s first: the daemon reads the notes saved, and it is not saved yet"))
     ((and file (not id) (buffer-modified-p))
      (arcology-oracle--user-error
       "Save %s first: with no org-roam node at point, the daemon summarizes the file as saved"
       (file-name-nondirectory file)))
     ((not file)
      (arcology-oracle--refuse-without-file "the daemon summarizes notes as saved"))
     ((arcology-oracle--node-private-p)
      (arcology-oracle--user-error "%s is private: the daemon never reads it, nothing is summarized" title))
     ((and id (arcology-oracle--node-is-answer-p))
      (arcology-oracle--user-error "%s is the oracle's own answer, not your notes: nothing to summarize" title)))
    (setq origin (arcology-oracle--origin)
          entry (list :origin origin))
    (setq entry (plist-put entry :again
                           (lambda ()
                             (arcology-oracle--in-origin
                              origin (lambda () (arcology-oracle-summarize question))
                              (lambda () (arcology-oracle--summarize-send title question id file entry))))))
    (when (buffer-modified-p)  ; a node: summarized as saved, which may not be as shown
      (message "arcology-oracle: %s is summarized as saved: save %s to include your edits"
               title (file-name-nondirectory file)))
    (arcology-oracle--summarize-send title question id file entry)))

(defun arcology-oracle--summarize-send (title question id file entry)
  "Summarize node ID (else FILE, saved), titled TITLE, into a new summary.
QUESTION, when non-nil, is its focus; ENTRY the summary's record
\(see `arcology-oracle--answer-start').  Without ID, or with
a FILE not under the roam directory as known now, the daemon's is
needed first (without ID, it must be known): a FILE outside it is
refused with a message, and the summaries buffer gets no entry for
it, nor for a daemon that cannot be reached then."
  (cl-flet ((send (what)
              (arcology-oracle--stream-answer
               (arcology-oracle--answer-start
                (concat "Summary of " title (if question (format " (%s)" question) ""))
                (arcology-oracle--answers-buffer arcology-oracle-summary-buffer-name) t entry)
               "/summarize"
               `(,what
                 ,@(when question `((question . ,question)))
                 ,@(when arcology-oracle-model `((model . ,arcology-oracle-model)))
                 (stream . t)))))
    (if (and id (or (not file)
                    ;; One the daemon never reads (a hidden folder, its exclude_globs: known
                    ;; once it was asked) is refused below.
                    (when-let ((rel (and (assoc (arcology-oracle--base-url) arcology-oracle--server-roam-dirs)
                                         (arcology-oracle--relative-file file (arcology-oracle--roam-dir)))))
                      (not (arcology-oracle--unread-reason rel)))))
        (send `(node . ,id))
      ;; A session's first request asks where the notes are first: stopped meanwhile
      ;; (`arcology-oracle-stop'), nothing is sent.  A node in a file outside the
      ;; notes (as known so far) is refused as the file is: the daemon knows neither.
      (arcology-oracle--answer-with-roam-dir
       (lambda (_roam-dir)
         (arcology-oracle--among-notes
          file (if id ": nothing to summarize" ", and no org-roam node is at point: nothing to summarize")
          (lambda (rel) (send (if id `(node . ,id) `(file . ,rel))))
          (not id)))
       #'ignore))))

;;; Converse

(defvar arcology-oracle-answer-property "ORACLE_MODEL"
  "Property marking an answer heading inserted by `arcology-oracle-converse'.
The daemon writes it (with ROLE and CREATED) into every answer.")

(defun arcology-oracle--conversation-root ()
  "Move to the root heading of the conversation around point; return its level.
That is the nearest heading tagged `arcology-oracle-conversation-tag',
else the top-level heading around point."
  (org-back-to-heading t)
  (let ((found nil))
    (while (and (not found)
                (progn
                  (when (member arcology-oracle-conversation-tag (org-get-tags nil t))
                    (setq found t))
                  (and (not found) (org-up-heading-safe)))))
    (unless found
      (while (org-up-heading-safe)))
    (org-outline-level)))

(defun arcology-oracle--relevel (text level)
  "Return the org TEXT with its headings shifted so the first is at LEVEL."
  (let ((lines (split-string text "\n"))
        (top nil))
    (dolist (line lines)
      (when (string-match "\\`\\(\\*+\\) " line)
        (setq top (min (or top 1000) (length (match-string 1 line))))))
    (if (not top)
        (concat (make-string level ?*) " Answer\n" text)
      (let ((shift (- level top)))
        (mapconcat (lambda (line)
                     (if (string-match "\\`\\(\\*+\\) " line)
                         (concat (make-string (+ (length (match-string 1 line)) shift) ?*)
                                 (substring line (length (match-string 1 line))))
                       line))
                   lines "\n")))))

(defun arcology-oracle--answer-text (root text model)
  "Return the answer TEXT made a child of the heading at marker ROOT.
Its headings start one level below ROOT's; MODEL is recorded when
the daemon did not (see `arcology-oracle--insert-answer')."
  (with-current-buffer (marker-buffer root)
    (save-excursion
      (save-restriction
        (widen)
        (goto-char root)
        (let ((answer (arcology-oracle--relevel text (1+ (org-outline-level)))))
          (with-temp-buffer
            (delay-mode-hooks (org-mode))
            (insert (string-trim-right answer) "\n")
            (unless (org-entry-get (point-min) arcology-oracle-answer-property)
              (org-entry-put (point-min) arcology-oracle-answer-property (or model "unknown")))
            (string-trim-right (buffer-string))))))))

;; The conversation's root is found again by a text property on its
;; heading line, not by a marker alone: a marker stays where text was
;; deleted or inserted, so a subtree moved (killed and yanked), deleted,
;; or a heading typed at the root's start left it on another heading,
;; and the answer went under a conversation it does not answer.

(defun arcology-oracle--mark-conversation (pos)
  "Tag the heading line at POS as a conversation awaiting an answer.
Return the tag: a property of its own (two answers awaited for one
conversation each find it).  The tag moves with the line's text (a
moved subtree keeps it) and goes with it (a deleted one loses it);
it is no change to the buffer."
  (let ((tag (make-symbol "arcology-oracle-conversation")))
    (save-excursion
      (goto-char pos)
      (with-silent-modifications
        (put-text-property (line-beginning-position) (line-end-position) tag t)))
    tag))

(defun arcology-oracle--conversation-headings (buffer tag)
  "Return the positions of the headings of BUFFER with TAG on their line."
  (with-current-buffer buffer
    (save-excursion
      (save-restriction
        (widen)
        (let ((pos (point-min)) found)
          (while (setq pos (text-property-any pos (point-max) tag t))
            (goto-char pos)
            (beginning-of-line)
            (when (and (looking-at org-outline-regexp) (not (memq (point) found)))
              (push (point) found))
            (setq pos (min (point-max) (1+ (line-end-position)))))
          (nreverse found))))))

(defun arcology-oracle--unmark-conversation (buffer tag)
  "Take TAG off BUFFER's text, if BUFFER is live."
  (when (buffer-live-p buffer)
    (with-current-buffer buffer
      (save-restriction
        (widen)
        (with-silent-modifications
          (remove-text-properties (point-min) (point-max) (list tag nil)))))))

(defun arcology-oracle--conversation-found (root tag)
  "Move marker ROOT to the conversation's heading tagged TAG; nil if none is sure.
That is the heading at ROOT if it holds TAG, else the only heading
holding it (a subtree moved); none when it was deleted or its line
retyped, or when copies hold it and ROOT is at none of them."
  (let ((headings (arcology-oracle--conversation-headings (marker-buffer root) tag)))
    (cond ((memq (marker-position root) headings) root)
          ((= (length headings) 1) (set-marker root (car headings))))))

(defun arcology-oracle--hides-local-variables-p (root text)
  "Return non-nil when TEXT after ROOT's subtree would hide Local Variables.
That is when the subtree ends the buffer with a Local Variables
block that Emacs would no longer find, as it reads one only in the
last 3000 characters (after the last page break) of a file."
  (with-current-buffer (marker-buffer root)
    (save-excursion
      (save-restriction
        (widen)
        (goto-char root)
        (org-end-of-subtree t t)
        (when (= (point) (point-max))
          (goto-char (point-max))
          (search-backward "\n\f" (max (- (point-max) 3000) (point-min)) 'move)
          (let ((case-fold-search t))
            (and (search-forward "Local Variables:" nil t)
                 (> (- (+ (point-max) 1 (length text)) 3000) (match-beginning 0)))))))))

(defun arcology-oracle--in-subtree-p (pos beg end)
  "Return non-nil when POS lies in the subtree from BEG to END.
END is where the next heading starts, or the end of the buffer:
point at the very end of the buffer is in a subtree that ends there."
  (and (>= pos beg) (or (< pos end) (= pos end (point-max)))))

(defun arcology-oracle--insert-answer (root text model)
  "Insert the org heading TEXT as the last child of the heading at marker ROOT.
The insertion is one undoable change.  The new heading carries
`arcology-oracle-answer-property' (MODEL when the daemon did not
set it).  Point, and each window showing the buffer, moves to it
only when it is still in the conversation's subtree: a reader who
went elsewhere in the meantime stays there, and the mark is pushed
at the answer instead.  A buffer narrowed to the conversation, or
to its last turn, is narrowed to include the answer: it goes where
the narrowed part ends, and was out of sight.  Return (POSITION .
MOVED), MOVED non-nil when point moved to the answer."
  (with-current-buffer (marker-buffer root)
    (let* ((edge (and (buffer-narrowed-p) (point-max)))
           (shown (save-restriction
                    (arcology-oracle--insert-answer-widened root text model)))
           (pos (car shown)))
      (when (and edge (nth 2 shown) (>= pos edge)
                 (save-restriction
                   (widen)
                   (string-blank-p (buffer-substring-no-properties edge pos))))
        (narrow-to-region (point-min) (nth 2 shown))
        (when (nth 1 shown)
          (goto-char pos)
          (dolist (w (get-buffer-window-list nil nil t))
            (set-window-point w pos))))
      (when (nth 2 shown) (set-marker (nth 2 shown) nil))
      (cons pos (nth 1 shown)))))

(defun arcology-oracle--insert-answer-widened (root text model)
  "Do the work of `arcology-oracle--insert-answer' in the widened buffer.
ROOT, TEXT and MODEL are as there.  Return (POSITION MOVED END):
END a marker at the end of the text inserted."
  (widen)
  (let* ((answer (arcology-oracle--answer-text root text model))
         (beg (marker-position root))
         (end (save-excursion (goto-char root) (org-end-of-subtree t t) (point)))
         (inside (arcology-oracle--in-subtree-p (point) beg end))
         ;; Each place kept advances past the answer inserted at it.
         (here (copy-marker (point) t))
         (windows (mapcar (lambda (w) (list w (copy-marker (window-point w) t)
                                            (arcology-oracle--in-subtree-p (window-point w) beg end)))
                          (get-buffer-window-list nil nil t)))
         pos stop)
    (undo-boundary)
    (let ((group (prepare-change-group)))
      (unwind-protect
          (progn
            (activate-change-group group)
            (goto-char end)
            ;; A file without a final newline keeps none: the answer
            ;; goes on a new line, and ends the file as its turn did.
            (if (bolp)
                (progn (setq pos (point)) (insert answer "\n"))
              (insert "\n")
              (setq pos (point))
              (insert answer))
            (setq stop (point-marker)))
        (accept-change-group group)
        (undo-amalgamate-change-group group)))
    (undo-boundary)
    (goto-char (if inside pos here))
    (set-marker here nil)
    (pcase-dolist (`(,w ,marker ,in) windows)
      (set-window-point w (if in pos marker))
      (set-marker marker nil))
    (unless inside (push-mark pos t))
    (list pos inside stop)))

(defun arcology-oracle--converse-answer (root org model tag)
  "Put the daemon's answer ORG (by MODEL) under the conversation at marker ROOT.
The conversation is the heading tagged TAG (see
`arcology-oracle--conversation-found'): moved meanwhile, the answer
follows it.  Say where it went.  The answer goes to the kill ring
instead when the buffer became read-only while the model thought,
when the conversation's heading is gone (deleted, its line
retyped), and when it would hide the buffer's Local Variables."
  (let* ((buffer (marker-buffer root))
         (why (cond ((buffer-local-value 'buffer-read-only buffer) "became read-only")
                    ((not (arcology-oracle--conversation-found root tag))
                     "no longer holds the conversation's heading (deleted or retyped meanwhile)")
                    ((arcology-oracle--hides-local-variables-p root (arcology-oracle--answer-text root org model))
                     "has a Local Variables block near its end that the answer, after it, would hide from Emacs"))))
    (if why
        (progn
          (kill-new (arcology-oracle--answer-text root org model))
          (arcology-oracle--report
           (format "%s %s: the answer is on the kill ring (%s to yank it)"
                   (buffer-name buffer) why (substitute-command-keys "\\[yank]"))))
      (pcase-let ((`(,pos . ,moved) (arcology-oracle--insert-answer root org model)))
        (with-current-buffer buffer
          (add-hook 'org-open-at-point-functions #'arcology-oracle--open-cited-source nil t)
          (if moved
              (message "arcology-oracle: answered (undo or M-x arcology-oracle-discard to drop it)")
            (message "arcology-oracle: answered in %s, line %d, under %s (mark set there: %s in that buffer)"
                     (buffer-name)
                     (save-restriction (widen) (line-number-at-pos pos))
                     (save-excursion (save-restriction (widen) (goto-char root)
                                                       (org-get-heading t t t t)))
                     (substitute-command-keys "\\[universal-argument] \\[set-mark-command]"))))))))

;;;###autoload
(defun arcology-oracle-converse ()
  "Answer the org conversation around point with a new heading.
The conversation is the subtree of the nearest heading tagged
`arcology-oracle-conversation-tag' (else the top-level heading
around point); its child headings are the turns.  The daemon's
answer is inserted as the conversation's last child, as one
undoable change, and point moves to it if it is still in the
conversation; else point stays and the mark is set at the answer.
Discard it with `arcology-oracle-discard'.  Returns at once.  A
read-only buffer is refused; one made read-only, or killed, while
the model thinks gets nothing: the answer goes to the kill ring."
  (interactive)
  (unless (derived-mode-p 'org-mode) (arcology-oracle--user-error "Conversations live in org-mode buffers"))
  (save-excursion
    (save-restriction
      (widen)
      (when (org-before-first-heading-p)
        (arcology-oracle--user-error "Put point in the conversation's subtree"))
      (when buffer-read-only
        (arcology-oracle--user-error "Buffer %s is read-only" (buffer-name)))
      (arcology-oracle--conversation-root)
      (when (arcology-oracle--private-here-p)
        (arcology-oracle--user-error "This conversation is in a private part of your notes: nothing was sent"))
      (let* ((root (copy-marker (point)))
             (buffer (current-buffer))
             (name (buffer-name))
             (level (org-outline-level))
             (tag (arcology-oracle--mark-conversation (point)))
             (done (lambda ()
                     (arcology-oracle--unmark-conversation buffer tag)
                     (set-marker root nil)))
             ;; The saved file's line, which unsaved edits may have moved: sent
             ;; without one, the daemon judges the file, and the text by itself.
             (line (and (not (buffer-modified-p)) (line-number-at-pos nil t)))
             (file (arcology-oracle--visited-file))
             (text (buffer-substring-no-properties
                    (point) (save-excursion (org-end-of-subtree t t) (point)))))
        (message "arcology-oracle: thinking…")
        (arcology-oracle--answer-with-roam-dir
         (lambda (roam-dir)
           ;; Where the root is saved: the daemon refuses a conversation in a private
           ;; part of the saved file (a tag above it, the file's tags).
           (let* ((rel (arcology-oracle--relative-file file roam-dir))
                  (req nil)
                  (forget (arcology-oracle--answering
                           (lambda ()
                             (arcology-oracle--http-cancel req)
                             (funcall done)))))
             (setq
              req
              (arcology-oracle--json
              "POST" "/converse"
              :json `((org . ,text)
                      ,@(when rel `((file . ,rel)))
                      ,@(when (and rel line) `((line . ,line)))
                      ,@(when arcology-oracle-model `((model . ,arcology-oracle-model))))
              :timeout arcology-oracle-llm-timeout
              :callback
              (lambda (answer)
                (funcall forget)
                (let ((org (alist-get 'org answer)))
                  (cond ((not (and (stringp org) (not (string-blank-p org))))
                         (arcology-oracle--report "the daemon gave an empty answer"))
                        ((not (buffer-live-p buffer))
                         ;; Killed while the model thought: said, and kept, not dropped unseen.
                         (kill-new (string-trim-right (arcology-oracle--relevel org (1+ level))))
                         (arcology-oracle--report
                          (format "%s was killed before the answer came: the answer is on the kill ring (%s to yank it)"
                                  name (substitute-command-keys "\\[yank]"))))
                        (t (arcology-oracle--converse-answer root org (alist-get 'model answer) tag)))
                  (funcall done)))
              :errback
              (lambda (message)
                (funcall forget)
                (funcall done)
                (arcology-oracle--report message))))))
         (lambda () (funcall done))
         (lambda (message)
           (funcall done)
           (arcology-oracle--report message)))))))

;;;###autoload
(defun arcology-oracle-discard ()
  "Delete the answer heading at point inserted by `arcology-oracle-converse'.
An answer holding a heading of yours (one typed under it) is not
deleted: that heading would go with it.  One undo brings the answer
back."
  (interactive)
  (unless (derived-mode-p 'org-mode) (arcology-oracle--user-error "Not in an org-mode buffer"))
  (let (title lines)
    (save-excursion
      (when (org-before-first-heading-p) (arcology-oracle--user-error "No answer at point"))
      (org-back-to-heading t)
      (while (and (not (org-entry-get nil arcology-oracle-answer-property))
                  (org-up-heading-safe)))
      (unless (org-entry-get nil arcology-oracle-answer-property)
        (arcology-oracle--user-error "No inserted answer at point"))
      (setq title (org-get-heading t t t t))
      (let ((beg (point))
            (end (progn (org-end-of-subtree t t) (point))))
        ;; The daemon writes an answer as one heading: a heading below it is the user's.
        (save-excursion
          (goto-char beg)
          (end-of-line)
          (when (re-search-forward org-outline-regexp-bol end t)
            (arcology-oracle--user-error
             "The answer \"%s\" holds your heading \"%s\": move it out first, or delete the answer by hand"
             title (org-get-heading t t t t))))
        ;; Last in a file without a final newline, the answer was put on
        ;; a line of its own: the newline before it goes with it.
        (when (and (= end (point-max)) (/= (char-before end) ?\n)
                   (> beg (point-min)) (= (char-before beg) ?\n))
          (setq beg (1- beg)))
        (setq lines (count-lines beg end))
        (delete-region beg end)))
    (message "Discarded the answer \"%s\" (%d lines): %s brings it back"
             title lines (substitute-command-keys "\\[undo]"))))

;;; Search

(defvar arcology-oracle--search-history nil
  "Queries given to `arcology-oracle-search'.")

(defvar arcology-oracle--search-request nil
  "The search request in flight, if any.")

(defvar arcology-oracle--search-generation 0
  "Counter of searches; only the latest one prompts.")

(defvar arcology-oracle--search-waiting nil
  "(QUERY . RESULTS) of the last search that arrived while the user went on.
`arcology-oracle-search-results' offers them.")

(declare-function arcology-oracle--similar-post-command-h "arcology-oracle-similar" ())

(defun arcology-oracle--search-candidates (results)
  "Return an alist of (CANDIDATE . RESULT) for the search RESULTS.
A candidate is the result's outline path, its note's title first,
each part once; equal ones are made unique."
  (let ((seen (make-hash-table :test 'equal)))
    (mapcar (lambda (result)
              (let ((candidate (or (arcology-oracle--outline result) "?")))
                (when (string-empty-p candidate) (setq candidate "?"))
                (while (gethash candidate seen)
                  (setq candidate (concat candidate " ")))
                (puthash candidate t seen)
                (cons candidate result)))
            results)))

(defun arcology-oracle--search-annotation (result)
  "Return the annotation of the search RESULT: its role and snippet.
Oracle answers and conversation turns (the daemon's `role') are
marked as such; a snippet that only repeats the heading is left out."
  (let ((role (pcase (alist-get 'role result)
                ("oracle" "[oracle answer] ")
                ("conversation" "[conversation] ")
                (_ "")))
        (snippet (arcology-oracle--snippet result)))
    (concat "  " (propertize role 'face 'arcology-oracle-tag)
            (propertize (if snippet (arcology-oracle--one-line snippet 70) "")
                        'face 'completions-annotations))))

(defun arcology-oracle--search-choose (query results)
  "Let the user choose among the search RESULTS for QUERY, then visit it."
  (if (null results)
      (message "arcology-oracle: nothing found for %S" query)
    (let* ((candidates (arcology-oracle--search-candidates results))
           (annotate (lambda (candidate)
                       (when-let ((result (cdr (assoc candidate candidates))))
                         (arcology-oracle--search-annotation result))))
           (table (lambda (string pred action)
                    (if (eq action 'metadata)
                        `(metadata (category . arcology-oracle-note)
                                   (display-sort-function . identity)
                                   (annotation-function . ,annotate))
                      (complete-with-action action candidates string pred))))
           (choice (completing-read (format "Notes for %s: " query) table nil t)))
      (arcology-oracle--visit (cdr (assoc choice candidates)))
      ;; Visited from a timer, not a command: nothing else tells the similar notes
      ;; window that point is at another heading now.
      (when (fboundp 'arcology-oracle--similar-post-command-h)
        (arcology-oracle--similar-post-command-h)))))

;;;###autoload
(defun arcology-oracle-search-results ()
  "Choose among the results of the last search that arrived while you went on.
A search offers its results as soon as the daemon answers; when you
typed or ran another command meanwhile, they wait for this command
instead of taking over what you were typing."
  (interactive)
  (pcase-let ((`(,query . ,results) arcology-oracle--search-waiting))
    (unless query (arcology-oracle--user-error "No search results are waiting"))
    (arcology-oracle--search-choose query results)))

;;;###autoload
(defun arcology-oracle-search (query)
  "Search the notes for QUERY and visit the result chosen.
The results are offered with `completing-read' (so vertico,
consult or icomplete show them if enabled) as soon as the daemon
answers; Emacs does not wait meanwhile.  When you typed or ran a
command before they came, they wait for
`arcology-oracle-search-results' instead."
  (interactive (list (read-string "Search notes: " nil 'arcology-oracle--search-history)))
  (when (string-blank-p query) (arcology-oracle--user-error "Empty query"))
  (arcology-oracle--http-cancel arcology-oracle--search-request)
  (message "arcology-oracle: searching…")
  (let ((generation (cl-incf arcology-oracle--search-generation))
        (keys num-input-keys))
    ;; The roam directory is needed to visit results by file and line.
    (arcology-oracle--with-roam-dir
     (lambda (_roam-dir)
       (when (= generation arcology-oracle--search-generation)
         (setq arcology-oracle--search-request
               (arcology-oracle--json
                "GET" "/search"
                :query `(("q" ,query) ("k" ,arcology-oracle-result-count))
                :callback
                (lambda (answer)
                  (setq arcology-oracle--search-request nil)
                  (let ((results (alist-get 'results answer)))
                    (if (or (active-minibuffer-window) (/= num-input-keys keys))
                        ;; The user went on (typing, another command): a prompt now
                        ;; would take their next keys.
                        (progn
                          (setq arcology-oracle--search-waiting (cons query results))
                          (message "arcology-oracle: %d results for %S are ready: %s shows them"
                                   (length results) query
                                   (substitute-command-keys "\\[arcology-oracle-search-results]")))
                      ;; Out of the process sentinel, so that the prompt can be quit.
                      (run-at-time 0 nil (lambda ()
                                           (arcology-oracle--guard
                                             (arcology-oracle--search-choose query results)))))))
                :errback (lambda (message)
                           (setq arcology-oracle--search-request nil)
                           (arcology-oracle--report message))))))
     (lambda (message)
       (when (= generation arcology-oracle--search-generation)
         (arcology-oracle--report message))))))

(provide 'arcology-oracle-ask)

;;; arcology-oracle-ask.el ends here
