;;; arcology-oracle-similar-links.el --- Linking a similar note from the note it is similar to -*- lexical-binding: t -*-

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

;; In the similar notes buffer, `arcology-oracle-insert-link' (i)
;; writes [[id:ID][Title]] of the note at point into the buffer the
;; list is about, where `arcology-oracle-insert-link-at' says, and
;; `arcology-oracle-copy-link' (w) copies it.

;;; Code:

(require 'org)
(require 'arcology-oracle-notes)
(require 'arcology-oracle-link-place)
(require 'arcology-oracle-similar)

;;;###autoload
(defun arcology-oracle-insert-link ()
  "Insert a link to the note at point into the buffer the list is about.
It goes at the end of the paragraph around point in that buffer, or
at point (see `arcology-oracle-insert-link-at'), never into a
heading line, a drawer, a block or a keyword line; the message
says where.  One undo removes it."
  (interactive)
  (let* ((result (arcology-oracle--result-at-point))
         (link (arcology-oracle--link-for result))
         (source arcology-oracle--similar-source)
         where)
    (unless (buffer-live-p source) (arcology-oracle--user-error "The buffer these notes are about is gone"))
    (with-current-buffer source
      (when buffer-read-only (arcology-oracle--user-error "Buffer %s is read-only" (buffer-name)))
      (let ((window (arcology-oracle--last-window-of source)))
        (save-excursion
          (when window (goto-char (window-point window)))
          (unless (arcology-oracle--similar-about-p source (save-restriction (widen) (arcology-oracle--heading-start)))
            ;; Point moved on (or the heading changed) before the new list came: this
            ;; one is another heading's.  Its list is asked for now.
            (arcology-oracle-similar-refresh t)
            (arcology-oracle--user-error
             "This list is about another heading than the one at point in %s: its list is on its way"
             (buffer-name source)))
          (setq where (arcology-oracle--insert-link-in-note link (alist-get 'node_id result)))
          (when window (arcology-oracle--point-after-link window)))))
    (arcology-oracle--message "Inserted a link to \"%s\" into %s, %s" (org-link-display-format link) (buffer-name source) where)))

;;;###autoload
(defun arcology-oracle-copy-link ()
  "Copy the org link to the note at point to the kill ring."
  (interactive)
  (let ((link (arcology-oracle--link-for (arcology-oracle--result-at-point))))
    (kill-new link)
    ;; The title, not [[id:36fb47dd-...][...]]: the link itself is on the kill ring.
    (arcology-oracle--message "Copied the link to \"%s\" (%s pastes it)" (org-link-display-format link)
                              (substitute-command-keys "\\[yank]"))))

(provide 'arcology-oracle-similar-links)

;;; arcology-oracle-similar-links.el ends here
