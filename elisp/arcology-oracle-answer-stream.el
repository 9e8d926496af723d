;;; arcology-oracle-answer-stream.el --- An answer streaming into its entry, and stopping answers -*- lexical-binding: t -*-

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

;; An answer streamed from the daemon into its entry in the answers
;; (or summaries) buffer: a line saying that it is awaited, then the
;; date and model, the answer made Org as it comes, its failure or
;; stop, and its sources as links; asked by `arcology-oracle-ask'
;; (arcology-oracle-ask.el) and the summaries
;; \(arcology-oracle-summarize.el).  Also the answers still to come,
;; conversations' too (arcology-oracle-converse.el), and
;; `arcology-oracle-stop', which stops them.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'org)
(require 'arcology-oracle-notes)
(require 'arcology-oracle-answers)
(require 'arcology-oracle-markdown)
(require 'arcology-oracle-streaming)
(require 'arcology-oracle-cut-short)

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
    (arcology-oracle--message (if stops
                                  (format "Stopped %d answer%s" (length stops) (if (cdr stops) "s" ""))
                                "No answer is coming"))))

(defun arcology-oracle--stream-answer (marker path payload)
  "POST PAYLOAD to PATH and stream the answer in at MARKER, then its sources.
Failures are reported and noted in the buffer; `arcology-oracle-stop'
ends it.  Until the daemon's first line, MARKER shows that the answer
is awaited and how to stop it (a model may take a minute to load):
shown only, not text of the buffer; a `found' line (/ask with
progress) turns it into how many notes were found.  The sources are
headed \"Sources (keyword match only)\" when the daemon found the
notes by keywords (its `mode': the embedder was slow).  Returns the
request state; nil, asking nothing, when MARKER's buffer was killed."
  ;; The answer's buffer killed while the daemon was asked where its notes are: nothing to ask.
  (when (buffer-live-p (marker-buffer marker))
    (let ((sources nil)
          (used nil)
          (keywords nil)  ; the notes were found by keywords (the `sources' event's mode)
          (started nil)
          (found nil)     ; the daemon's `found' line came: it had found the notes
          (worded nil)    ; words of the answer came, not only blank pieces
          (failed nil)
          (req nil)
          (forget #'ignore)
          (md (arcology-oracle--md-create))  ; the model's markdown made Org, line by line
          (waiting (arcology-oracle--waiting-note marker)))
      (cl-flet ((finish ()
			(funcall forget failed)
			(arcology-oracle--md-finish marker md)
			(when (stringp failed)
			  (arcology-oracle--report
			   (arcology-oracle--answer-cut-short failed (if worded t 'begun) (marker-buffer marker))))
			(arcology-oracle--insert-following
			 marker (cond ((eq failed 'stopped) (if worded "\n\n[Stopped]" "[Stopped]"))
				      (failed (format (if worded "\n\n[Failed: %s]" "[Failed: %s]")
						      (arcology-oracle--answer-cut-short failed (if worded t 'begun))))
				      (t "")))
			;; The window following the answer stays on it, the sources
			;; below: following them to the end scrolled the answer out of
			;; a small window (Emacs recentred on the last line).
			(arcology-oracle--insert-following
			 marker (concat (if keywords "\n\n** Sources (keyword match only)\n" "\n\n** Sources\n")
					(or (arcology-oracle--format-sources sources)
					    ;; Used, then made private or deleted before
					    ;; the answer began: the daemon names none.
					    (if used
						"- none: the notes used have left the index since (made private or deleted)\n"
					      "- none: no notes were relevant enough\n")))
			 t)
			(set-marker marker nil)))
	(let* ((stop (lambda ()
                       (delete-overlay waiting)
                       (arcology-oracle--http-cancel req)
                       (if started
                           (progn (setq failed 'stopped) (finish))
			 (funcall forget t)
			 (arcology-oracle--insert-following marker "[Stopped]\n")
			 (set-marker marker nil))))
               (unlisted (arcology-oracle--answering stop))
               ;; Killing the answer's buffer stops it, as `arcology-oracle-stop' would.
               (done (arcology-oracle--streaming-start marker (lambda () (funcall forget t) (funcall stop)))))
          ;; QUIET: the answer failed or was stopped, and that was said.
          (setq forget (lambda (&optional quiet) (funcall unlisted) (funcall done quiet))))
	(setq
	 req
	 (arcology-oracle--ndjson
	  "POST" path :json payload :timeout arcology-oracle-llm-timeout
	  :on-event
	  (lambda (event)
            (let ((type (alist-get 'type event)))
              (if (equal type "found")
		  ;; The notes are found, the model not answering yet (it may be loading).
		  (progn (setq found t)
                         (arcology-oracle--waiting-say waiting (arcology-oracle--found-words event)))
		(delete-overlay waiting)
		(pcase type
		  ("sources" (setq sources (alist-get 'sources event)
                                   used (alist-get 'used_notes event)
                                   keywords (equal (alist-get 'mode event) "keyword")
                                   started t)
                   (arcology-oracle--insert-following marker (arcology-oracle--answer-meta event)))
		  ("token" (when-let ((text (alist-get 'text event)))
                             (setq worded (or worded (string-match-p "[^ \t\n]" text)))
                             (arcology-oracle--md-insert marker text md)))
		  ;; After `found', a model that cannot answer: "[Failed: ...]" as a 503 was.
		  ("error" (setq failed (arcology-oracle--with-missing-model
					 event (or (alist-get 'message event) "the daemon failed"))))))))
	  :on-done
	  (lambda ()
            (delete-overlay waiting)
            (if started
		(finish)
              ;; Every answer of the daemon starts with its sources: a stream that
              ;; ended without them was no answer (its lines unreadable), though it
              ;; read as one with "- none: no notes were relevant enough".
              (funcall forget t)
              (arcology-oracle--answer-failed
               marker (if (stringp failed) failed "the daemon sent no answer that could be read") (stringp failed))))
	  :errback
	  (lambda (message)
            (delete-overlay waiting)
            (if (not started)
		(progn (funcall forget t)
                       (arcology-oracle--answer-failed
                        marker (arcology-oracle--gone-before-answering message found)))
              ;; Cut off mid-answer (the daemon killed, the network gone, the
              ;; timeout): the text so far cites [N], so its sources still follow,
              ;; and the failure is a paragraph of its own, as a daemon's error is.
              (unless failed (setq failed message))
              (finish)))))))))

(defun arcology-oracle--waiting-note (marker)
  "Show at MARKER that an answer is awaited; return the overlay showing it."
  (let ((overlay (make-overlay marker marker (marker-buffer marker))))
    (arcology-oracle--waiting-say overlay "Waiting for the answer…")
    overlay))

(defun arcology-oracle--waiting-say (overlay text)
  "Show TEXT and how to stop the answer as the waiting OVERLAY's line."
  (overlay-put overlay 'after-string
               (propertize (concat text (substitute-command-keys
                                         (concat " (\\<arcology-oracle-answers-mode-map>"
                                                 "\\[arcology-oracle-stop] stops it)\n")))
                           'face 'shadow)))

(defun arcology-oracle--found-words (event)
  "Return the words for the daemon's `found' EVENT: how many notes, how found.
EVENT comes first when /ask is sent with progress: its `count' of
notes and its `mode', \"keyword\" when the question's embedding did
not come in time."
  (let ((count (alist-get 'count event)))
    (format "Found %s%s; waiting for the model…"
            (cond ((not (integerp count)) "the notes")
                  ((= count 0) "no notes")
                  ((= count 1) "1 note")
                  (t (format "%d notes" count)))
            (if (equal (alist-get 'mode event) "keyword") " by keywords" ""))))

(defun arcology-oracle--answer-failed (marker message &optional again)
  "End the answer at MARKER with the failure MESSAGE, and show MESSAGE.
A daemon not reached was asked nothing: the entry keeps the question
and says so, and how to ask again once the daemon runs, rather than
a bare \"[Failed: ...]\".  One that went away or stayed silent (see
`arcology-oracle--unanswered-p'), or AGAIN (its model failed), or
whose chat model Ollama lacks (`arcology-oracle--missing-model': a
503 of /summarize, which has no `found' line first) says how to ask
again too, after pulling it (`arcology-oracle--answer-cut-short')."
  (let ((again (and (or again (arcology-oracle--unanswered-p message)
                        (arcology-oracle--missing-model message))
                    (not (arcology-oracle--unreachable-p message)))))
    (arcology-oracle--report
     (if again (arcology-oracle--answer-cut-short message nil (marker-buffer marker)) message))
    (arcology-oracle--insert-following
     marker (if (not (arcology-oracle--unreachable-p message))
                (format "[Failed: %s]\n" (if again (arcology-oracle--answer-cut-short message nil) message))
              ;; Marked so that the question asked again replaces this entry
              ;; (`arcology-oracle--drop-not-asked').  MESSAGE says how to start
              ;; the daemon (`arcology-oracle--http-unreachable').
              (propertize (concat "Not asked: " message ", then " (arcology-oracle--again-keys)
                                  " here asks again.\n")
                          'arcology-oracle-not-asked t))))
  (set-marker marker nil))

(provide 'arcology-oracle-answer-stream)

;;; arcology-oracle-answer-stream.el ends here
