;;; arcology-oracle-memory.el --- Remember notes through the daemon, make headings private -*- lexical-binding: t -*-

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

;; Memory, from Emacs:
;;
;; - `arcology-oracle-memorize' sends the region (or text read from
;;   the minibuffer) to the daemon's POST /memorize, which appends it
;;   as a heading to today's org-roam daily note (or to the capture
;;   inbox while that daily has unsaved edits in Emacs) and indexes it
;;   at once.  The answer's [[id:...][...]] link is shown and kept in
;;   `arcology-oracle-last-memory'; a buffer visiting the file without
;;   unsaved edits is reverted so it shows the new heading.
;; - `arcology-oracle-make-private' tags the heading at point with the
;;   first of `arcology-oracle-private-tags', so that the daemon drops
;;   it (and its subtree) from the index when the file is saved.

;;; Code:

(require 'org)
(require 'arcology-oracle)

(defcustom arcology-oracle-memorize-tags nil
  "Tags given to every note `arcology-oracle-memorize' sends.
A list of Org tags, for example (\"inbox\" \"phone\")."
  :type '(repeat string)
  :group 'arcology-oracle)

(defcustom arcology-oracle-private-tags '("private")
  "Tags that keep a heading out of the daemon's index.
Keep this in step with the daemon's `private_tags' setting;
`arcology-oracle-make-private' adds the first one, for example
\"private\"."
  :type '(repeat string)
  :group 'arcology-oracle)

(defvar arcology-oracle-last-memory nil
  "The daemon's answer to the last `arcology-oracle-memorize', an alist.
Its keys are `id', `file', `line', `link', `inbox' and `note'.")

(defun arcology-oracle--memory-payload (text title tags)
  "Return the JSON alist of POST /memorize for TEXT, TITLE and TAGS."
  (append `((text . ,text))
          (when (and title (not (string-empty-p title))) `((title . ,title)))
          `((tags . ,(vconcat (or tags arcology-oracle-memorize-tags))))))

(defun arcology-oracle--memory-revert (roam-dir rel)
  "Revert the buffer visiting REL under ROAM-DIR, unless it has unsaved edits."
  (when-let* ((roam-dir roam-dir)
              (buffer (find-buffer-visiting (expand-file-name rel roam-dir))))
    (with-current-buffer buffer
      (unless (buffer-modified-p)
        (revert-buffer t t t)))))

(defun arcology-oracle--memorized (answer &optional callback)
  "Report the daemon's ANSWER to POST /memorize, then call CALLBACK with it."
  (setq arcology-oracle-last-memory answer)
  (let ((file (alist-get 'file answer)))
    (message "Remembered in %s:%s %s%s"
             file (alist-get 'line answer) (alist-get 'link answer)
             (if (eq (alist-get 'inbox answer) t)
                 " (today's daily has unsaved edits: written to the inbox)"
               ""))
    (arcology-oracle--with-roam-dir
     (lambda (roam-dir) (arcology-oracle--memory-revert roam-dir file))))
  (when callback (funcall callback answer)))

;;;###autoload
(defun arcology-oracle-memorize (text &optional title tags callback)
  "Send TEXT to the daemon, to be remembered in today's daily note.
Interactively TEXT is the active region, else read from the
minibuffer.  TITLE names the heading (default: the text's first
words); TAGS are Org tags (default `arcology-oracle-memorize-tags').
CALLBACK, when given, is called with the daemon's answer, after it
is reported in the echo area."
  (interactive
   (list (if (use-region-p)
             (buffer-substring-no-properties (region-beginning) (region-end))
           (read-string "Remember: "))))
  (when (string-empty-p (string-trim (or text "")))
    (user-error "Nothing to remember"))
  (arcology-oracle--json
   "POST" "/memorize"
   :json (arcology-oracle--memory-payload text title tags)
   :callback (lambda (answer) (arcology-oracle--memorized answer callback))))

;;;###autoload
(defun arcology-oracle-make-private ()
  "Tag the heading at point with the first of `arcology-oracle-private-tags'.
Saving the file then takes the heading and its subtree out of the
daemon's index."
  (interactive)
  (unless (derived-mode-p 'org-mode)
    (user-error "Not in an Org buffer"))
  (let ((tag (car arcology-oracle-private-tags)))
    (unless tag
      (user-error "`arcology-oracle-private-tags' is empty"))
    (save-excursion
      (org-back-to-heading t)
      (org-toggle-tag tag 'on))
    (message "Tagged :%s:; save the file to take the heading out of the index" tag)))

(provide 'arcology-oracle-memory)

;;; arcology-oracle-memory.el ends here
