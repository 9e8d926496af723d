;;; arcology-oracle-similar.el --- The similar notes side window, following point -*- lexical-binding: t -*-

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

;; Notes similar to the heading at point, in two places:
;; `arcology-oracle-similar-mode' keeps a side window that follows point
;; from heading to heading, and `arcology-oracle-similar-section' adds
;; the list to the org-roam buffer (add it to `org-roam-mode-sections').
;; Neither waits for the daemon: an answer replaces the list when it
;; arrives, unless a newer request was made in between.
;;
;; This file asks for the side window's list and follows point; the
;; buffer itself is arcology-oracle-similar-buffer.el's, the org-roam
;; section arcology-oracle-similar-section.el's.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'subr-x)
(require 'org)
(require 'arcology-oracle-notes)
(require 'arcology-oracle-similar-buffer)
(require 'arcology-oracle-similar-place)
(require 'arcology-oracle-similar-query)

(defvar arcology-oracle-similar-mode)   ; defined below by `define-minor-mode'

(defvar arcology-oracle--similar-generation 0
  "Counter of similar-notes requests; an answer to an older one is dropped.")

(defvar arcology-oracle--similar-request nil
  "The similar-notes request in flight, if any.")

(defvar arcology-oracle--similar-timer nil
  "Idle timer of the next similar-notes refresh.")

(defvar arcology-oracle--similar-unanswered nil
  "Non-nil when the similar list says the daemon did not answer it.
The daemon was down, asleep or busy (see `arcology-oracle--unanswered-p'):
the next command in the note asks again, as moving to another
heading does, so that the list comes back by itself with the daemon.")

(defvar-local arcology-oracle--similar-last-modified nil
  "Whether the buffer had unsaved edits when its similar notes were last asked for.")

(defvar-local arcology-oracle--similar-last-line nil
  "The line of the heading whose similar notes were last asked for, as it read.")

(defun arcology-oracle-similar-refresh (&optional quiet)
  "Ask the daemon for the notes similar to the heading at point.
In the similar notes buffer, ask again about the heading it lists.
The answer replaces the list when it arrives, unless a newer
request was made in between; until then the list says \"Asking
again…\" (unless QUIET).  QUIET (automatic refreshes) reports a
daemon that is down only once."
  (interactive)
  (let ((source (if (derived-mode-p 'arcology-oracle-similar-buffer-mode)
                    arcology-oracle--similar-source
                  (current-buffer))))
    (unless (buffer-live-p source)
      (arcology-oracle--user-error "No buffer to find similar notes for"))
    (with-current-buffer source
      (unless (derived-mode-p 'org-mode)
        (arcology-oracle--user-error "Similar notes need an Org buffer"))
      (let* ((context (arcology-oracle--heading-context))
             (title (plist-get context :title))
             (tick (buffer-chars-modified-tick))
             (generation (cl-incf arcology-oracle--similar-generation)))
        (setq arcology-oracle--similar-unanswered nil
              arcology-oracle--similar-last-heading (plist-get context :start)
              arcology-oracle--similar-last-modified (and (buffer-modified-p) t)
              arcology-oracle--similar-last-line (arcology-oracle--similar-line-at (plist-get context :start)))
        (arcology-oracle--http-cancel arcology-oracle--similar-request)
        (setq arcology-oracle--similar-request nil)
        ;; `point-min' of the similar buffer: the note's may be narrowed.
        (with-current-buffer (arcology-oracle--similar-buffer)
          (cond ((not (get-text-property (point-min) 'arcology-oracle-title))
                 (arcology-oracle--similar-render source title "Looking for similar notes…"
                                                  nil (plist-get context :start)))
                ((or (not (arcology-oracle--similar-about-p source (plist-get context :start)))
                     (not (eql tick arcology-oracle--similar-tick)))
                 ;; The list shown is another heading's (or this one's before its
                 ;; last edits) until the answer comes: say so.
                 (arcology-oracle--similar-render
                  arcology-oracle--similar-source (get-text-property (point-min) 'arcology-oracle-title)
                  arcology-oracle--similar-results
                  (format "Asking about %s…" (arcology-oracle--title-text title))))
                ((not quiet)
                 ;; Asked by hand (g, C-c o s): said at once, as a daemon asleep
                 ;; answers only after `arcology-oracle-timeout'.
                 (arcology-oracle--similar-render
                  arcology-oracle--similar-source (get-text-property (point-min) 'arcology-oracle-title)
                  (if (stringp arcology-oracle--similar-results) "Asking again…" arcology-oracle--similar-results)
                  (unless (stringp arcology-oracle--similar-results) "Asking again…")))))
        ;; Cut out of its buffer, a private heading's text no longer says it is private.
        (if (arcology-oracle--private-here-p)
            (arcology-oracle--similar-render source title "This heading is private: nothing of it is sent."
                                             nil (plist-get context :start))
          (arcology-oracle--with-roam-dir
           (lambda (roam-dir)
             (when (and (= generation arcology-oracle--similar-generation)
                        (buffer-live-p source))
               (pcase-let ((`(,method ,path ,query ,json)
                            (with-current-buffer source
                              (arcology-oracle--similar-request-args context roam-dir)))
                           (unread (with-current-buffer source
                                     (when-let ((rel (and roam-dir (arcology-oracle--visited-file)
                                                          (arcology-oracle--relative-file
                                                           (arcology-oracle--visited-file) roam-dir))))
                                       (arcology-oracle--unread-reason rel)))))
                 (cond
                  (unread
                   (arcology-oracle--similar-render
                    source title (format "This note is not among the daemon's notes (%s): nothing of it is sent."
                                         unread)
                    nil (plist-get context :start)))
                  ((not method)
                   (arcology-oracle--similar-render
                    source title "Nothing to compare yet: this note is empty." nil (plist-get context :start)))
                  (t
                   (setq arcology-oracle--similar-request
                         (arcology-oracle--json
                          method path :query query :json json
                          :callback
                          (lambda (answer)
                            (when (and (= generation arcology-oracle--similar-generation) (buffer-live-p source))
                              (setq arcology-oracle--similar-request nil)
                              (let ((show (lambda (note)
                                            (when (and (= generation arcology-oracle--similar-generation)
                                                       (buffer-live-p source))
                                              (arcology-oracle--similar-render
                                               source title
                                               (arcology-oracle--similar-filter
                                                (arcology-oracle--results-of answer 'results) context)
                                               note (plist-get context :start))
                                              (with-current-buffer (arcology-oracle--similar-buffer)
                                                (setq arcology-oracle--similar-tick tick))))))
                                (if (equal (alist-get 'mode answer) "keyword")
                                    (arcology-oracle--keyword-note show)
                                  (funcall show nil)))))
                          :errback
                          (lambda (message)
                            (when (and (= generation arcology-oracle--similar-generation) (buffer-live-p source))
                              (setq arcology-oracle--similar-request nil)
                              (arcology-oracle--similar-failed source title message (plist-get context :start) quiet))))))))))
           (lambda (message)
             (when (and (= generation arcology-oracle--similar-generation) (buffer-live-p source))
               (arcology-oracle--similar-failed source title message (plist-get context :start) quiet)))))))))

(defun arcology-oracle--similar-failed (source title message start quiet)
  "Show MESSAGE, a failure, as the list of heading TITLE at START in SOURCE.
Also in the echo area (QUIET as for `arcology-oracle--report').
When the daemon did not answer, the list says when it asks again."
  (let ((unanswered (arcology-oracle--unanswered-p message)))
    (arcology-oracle--similar-render
     source title
     (if unanswered
         (concat message
                 (substitute-command-keys
                  "\n\nAsked again at your next command in the note; \
\\<arcology-oracle-similar-buffer-mode-map>\\[arcology-oracle-similar-refresh] asks now."))
       message)
     nil start)
    (setq arcology-oracle--similar-unanswered unanswered)
    (arcology-oracle--report message quiet)))

(defun arcology-oracle--similar-timer-fn (buffer)
  "Refresh the similar notes for BUFFER, if it is still current and shown.
Otherwise (the minibuffer was opened meanwhile, say) the next command
in BUFFER asks again: the list must not stay another heading's."
  (setq arcology-oracle--similar-timer nil)
  (arcology-oracle--guard
    (when (buffer-live-p buffer)
      (if (and (eq buffer (window-buffer (selected-window)))
               (arcology-oracle--similar-visible-p))
          (with-current-buffer buffer
            (when arcology-oracle-similar-mode
              (arcology-oracle-similar-refresh t)))
        (with-current-buffer buffer
          (setq arcology-oracle--similar-last-heading nil))))))

(defun arcology-oracle--similar-schedule (delay)
  "Refresh the similar notes for the current buffer after DELAY idle seconds."
  (when (timerp arcology-oracle--similar-timer)
    (cancel-timer arcology-oracle--similar-timer))
  (setq arcology-oracle--similar-timer
        (run-with-idle-timer delay nil #'arcology-oracle--similar-timer-fn (current-buffer))))

(defun arcology-oracle--similar-line-at (start)
  "The line at START, a heading's, as the list compares it to see it renamed."
  (save-excursion (goto-char start) (buffer-substring-no-properties (point) (line-end-position))))

(defun arcology-oracle--similar-post-command-h ()
  "Schedule a refresh when point has moved to another heading.
Also when the buffer's unsaved edits began or were all undone since
the list was asked for (the list is then asked by the heading's
text, or again by the saved note), when the heading's line changed
\(renamed: the list checks its title), when the list's heading
was cut out, and after any command while the list says the daemon
did not answer (`arcology-oracle--similar-unanswered').  This runs
after every command, so it only compares two positions, three flags
and a line."
  (when (arcology-oracle--similar-visible-p)
    (let* ((start (arcology-oracle--heading-start))
           (modified (and (buffer-modified-p) t))
           (line (arcology-oracle--similar-line-at start)))
      (unless (and (not arcology-oracle--similar-unanswered)
                   (eql start arcology-oracle--similar-last-heading)
                   (eq modified arcology-oracle--similar-last-modified)
                   (equal line arcology-oracle--similar-last-line)
                   (not (arcology-oracle--similar-heading-gone-p))
                   (eq (current-buffer)
                       (buffer-local-value 'arcology-oracle--similar-source
                                           (arcology-oracle--similar-buffer))))
        (setq arcology-oracle--similar-last-heading start
              arcology-oracle--similar-last-modified modified
              arcology-oracle--similar-last-line line)
        (arcology-oracle--similar-schedule arcology-oracle-idle-delay)))))

(defun arcology-oracle--similar-kill-buffer-h ()
  "Have the list follow the note shown next when its own note is killed.
Killed by a command, the command's end does; killed by a callback
\(a forget that deleted the note), the list kept naming a note gone."
  (when-let ((list (get-buffer arcology-oracle-similar-buffer-name)))
    (when (eq (current-buffer) (buffer-local-value 'arcology-oracle--similar-source list))
      (run-at-time 0 nil (lambda ()
                           (arcology-oracle--guard
                             (with-current-buffer (window-buffer (selected-window))
                               (when arcology-oracle-similar-mode
                                 (arcology-oracle--similar-post-command-h)))))))))

(defun arcology-oracle--similar-after-save-h ()
  "Refresh the similar notes after a save, once the daemon has re-read the file.
The daemon waits for writes to settle and re-indexes the file, so
refresh a little later than after a move."
  (when (arcology-oracle--similar-visible-p)
    (arcology-oracle--similar-schedule (max 1.0 arcology-oracle-idle-delay))))

;;;###autoload
(define-minor-mode arcology-oracle-similar-mode
  "Show notes similar to the heading at point in a side window.
The list follows point from heading to heading after
`arcology-oracle-idle-delay' idle seconds, and after each save.
Hiding the window pauses it; `arcology-oracle-similar-show' brings
it back.  Turned off, it takes the list off screen when the list is
about this buffer.  \\<arcology-oracle-similar-buffer-mode-map>In the list, \
\\[arcology-oracle-visit-result] visits a note and \
\\[arcology-oracle-similar-refresh] asks again."
  :lighter " Similar"
  :group 'arcology-oracle
  (if arcology-oracle-similar-mode
      (if (or (not (derived-mode-p 'org-mode)) (arcology-oracle--answers-no-note))
          (progn (setq arcology-oracle-similar-mode nil)
                 (arcology-oracle--message "arcology-oracle: %s"
                                           (or (arcology-oracle--answers-no-note)
                                               "similar notes need an Org buffer")))
        (add-hook 'post-command-hook #'arcology-oracle--similar-post-command-h nil t)
        (add-hook 'after-save-hook #'arcology-oracle--similar-after-save-h nil t)
        (add-hook 'kill-buffer-hook #'arcology-oracle--similar-kill-buffer-h nil t)
        (setq arcology-oracle--similar-last-heading nil)
        (when (called-interactively-p 'any)
          (arcology-oracle-similar-show)))
    (remove-hook 'post-command-hook #'arcology-oracle--similar-post-command-h t)
    (remove-hook 'after-save-hook #'arcology-oracle--similar-after-save-h t)
    (remove-hook 'kill-buffer-hook #'arcology-oracle--similar-kill-buffer-h t)
    (arcology-oracle--similar-quit-for (current-buffer))))

;;;###autoload
(defun arcology-oracle-similar-turn-on ()
  "Turn on `arcology-oracle-similar-mode' in an org buffer visiting a file.
For `org-mode-hook': buffers without a file, such as the answers
buffer, are left alone."
  (when (and buffer-file-name (derived-mode-p 'org-mode))
    ;; C-c C-o on a line of a conversation answer's Sources: list opens that source.
    (add-hook 'org-open-at-point-functions #'arcology-oracle--open-cited-source nil t)
    (arcology-oracle-similar-mode 1)))

;;;###autoload
(define-globalized-minor-mode arcology-oracle-global-similar-mode
  arcology-oracle-similar-mode arcology-oracle-similar-turn-on
  :group 'arcology-oracle)

;;;###autoload
(defun arcology-oracle-similar-show ()
  "Show the similar notes window and fill it for the heading at point.
A window already showing the list is used again (see
`arcology-oracle--similar-action'): the list is asked for anew.  From
a list, for the note it is about (`arcology-oracle--in-listed-note')."
  (interactive)
  (unless (arcology-oracle--in-listed-note #'arcology-oracle-similar-show)
    (unless (derived-mode-p 'org-mode)
      (arcology-oracle--user-error "Similar notes need an Org buffer"))
    (when-let ((why (arcology-oracle--answers-no-note))) (arcology-oracle--user-error "%s" why))
    (unless arcology-oracle-similar-mode (arcology-oracle-similar-mode 1))
    (arcology-oracle--similar-placed
     (arcology-oracle--display (arcology-oracle--similar-buffer) (arcology-oracle--similar-action)))
    (arcology-oracle-similar-refresh)))

(defun arcology-oracle--similar-action ()
  "Return the `display-buffer' action for the similar notes window.
A window of the selected frame already showing the list is used
again, never a second one; else `arcology-oracle--similar-place'."
  (let* ((action (arcology-oracle--similar-place))
         (functions (car action)))
    (cons (cons #'display-buffer-reuse-window
                (if (functionp functions) (list functions) functions))
          (cdr action))))

(provide 'arcology-oracle-similar)

;;; arcology-oracle-similar.el ends here
