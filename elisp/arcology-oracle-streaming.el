;;; arcology-oracle-streaming.el --- An answer streaming into a buffer no window shows -*- lexical-binding: t -*-

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

;; An answer or a summary goes on streaming into its buffer when no
;; window shows that buffer any more (\[delete-other-windows] in the
;; note while it streams): the echo area says it is still coming and
;; how to stop it, then where it is once it is in.  Killing the buffer
;; stops the answer, and the daemon stops the model.

;;; Code:

(require 'seq)
(require 'arcology-oracle-echo)

(defvar arcology-oracle--streaming nil
  "The answers streaming in: a list (BUFFER STOP TO SHOWN) each.
STOP stops the answer, TO is \" to\" and its question in quotes (empty
when it has no heading), SHOWN is non-nil while a window shows BUFFER.")

(defun arcology-oracle--streaming-start (marker stop)
  "Watch the answer streaming in at MARKER, which STOP stops.
When no window shows its buffer any more (\\[delete-other-windows] in the
note, \\[quit-window] there) the echo area says the answer is still coming, and
how to stop it; killing the buffer stops it.  Return a function to
call once the answer ends, with non-nil when it failed or was
stopped (that was said): otherwise, no window showing the buffer,
it says where the answer is."
  (let* ((buffer (marker-buffer marker))
         (to (with-current-buffer buffer  ; its entry's heading
               (save-excursion
                 (goto-char marker)
                 (if (re-search-backward "^\\* \\(.+\\)$" nil t)
                     (format " to \"%s\"" (match-string-no-properties 1))
                   ""))))
         (entry (list buffer stop to (and (get-buffer-window buffer t) t))))
    (push entry arcology-oracle--streaming)
    (add-hook 'window-buffer-change-functions #'arcology-oracle--streaming-watch)
    (with-current-buffer buffer (add-hook 'kill-buffer-hook #'arcology-oracle--streaming-killed nil t))
    (lambda (&optional quiet)
      (when (memq entry arcology-oracle--streaming)
        (setq arcology-oracle--streaming (delq entry arcology-oracle--streaming))
        (unless (or quiet (not (buffer-live-p buffer)) (get-buffer-window buffer t))
          (arcology-oracle--message "The answer%s is in %s" to (buffer-name buffer)))))))

(defun arcology-oracle--streaming-watch (_frame)
  "Say which answers stream on into a buffer that left every window."
  (dolist (entry arcology-oracle--streaming)
    (let ((shown (and (get-buffer-window (car entry) t) t)))
      (when (and (nth 3 entry) (not shown) (buffer-live-p (car entry)))
        (arcology-oracle--message "The answer%s is still coming into %s (%s stops it)"
                                  (nth 2 entry) (buffer-name (car entry))
                                  (substitute-command-keys "\\[arcology-oracle-stop]")))
      (setf (nth 3 entry) shown)))
  (unless arcology-oracle--streaming
    (remove-hook 'window-buffer-change-functions #'arcology-oracle--streaming-watch)))

(defun arcology-oracle--streaming-killed ()
  "Stop the answers streaming into the buffer being killed, and say so.
The daemon stops the model: nobody is left to read the answer."
  (let ((killed (seq-filter (lambda (entry) (eq (car entry) (current-buffer))) arcology-oracle--streaming)))
    (when killed
      (dolist (entry killed)
        (setq arcology-oracle--streaming (delq entry arcology-oracle--streaming))
        (funcall (nth 1 entry)))
      (arcology-oracle--message "Stopped %s: %s was killed"
                                (if (cdr killed) (format "%d answers" (length killed))
                                  (concat "the answer" (nth 2 (car killed))))
                                (buffer-name)))))

(provide 'arcology-oracle-streaming)

;;; arcology-oracle-streaming.el ends here
