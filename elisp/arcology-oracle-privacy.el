;;; arcology-oracle-privacy.el --- Which parts of a note are private, for arcology-oracle -*- lexical-binding: t -*-

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

;; Whether text of an Org buffer is private: under a heading (or in a
;; file) tagged with one of `arcology-oracle-private-tags' or "crypt",
;; or excluded with ROAM_EXCLUDE, as the daemon's index reads them.
;; Text from there is never sent to the daemon.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'org)
(require 'arcology-oracle)

(defcustom arcology-oracle-private-tags '("private")
  "Tags that keep a heading out of the daemon's index.
Keep this in step with the daemon's `private_tags' setting;
`arcology-oracle-make-private' adds the first one, for example
\"private\".  Text from under such a heading is never sent."
  :type '(repeat string)
  :group 'arcology-oracle)

(defun arcology-oracle--file-tags ()
  "Return the tags of the #+filetags keywords of the current buffer.
Each keyword holds tags between colons or blanks, as Org has them;
those of its #+SETUPFILEs too."
  (cl-mapcan (lambda (value)
               (cl-mapcan (lambda (word) (split-string word ":" t))
                          (split-string value)))
             (cdr (assoc "FILETAGS" (org-collect-keywords '("FILETAGS"))))))

(defun arcology-oracle--private-tags-p (tags)
  "Return non-nil when one of TAGS is a private tag.
That is \"crypt\" or one of `arcology-oracle-private-tags', in any
letter case, as the daemon's index reads tags."
  (let ((private (mapcar #'downcase (cons "crypt" arcology-oracle-private-tags))))
    (seq-some (lambda (tag) (member (downcase tag) private)) tags)))

(defun arcology-oracle--src-edit-origin ()
  "Return the marker of the block this buffer edits, or nil.
Non-nil in the buffer \\[org-edit-special] opens on a source block: its
text is the block's, and whether it is private is decided there."
  (and (fboundp 'org-src-edit-buffer-p) (org-src-edit-buffer-p)
       (boundp 'org-src--beg-marker)
       (markerp org-src--beg-marker)
       (buffer-live-p (marker-buffer org-src--beg-marker))
       org-src--beg-marker))

(defun arcology-oracle--private-here-p (&optional pos)
  "Return non-nil when POS (default point) is in a private part of the buffer.
That is: the heading there, or one above it, or the file (its
#+filetags) has the tag \"crypt\" or one of
`arcology-oracle-private-tags' (any letter case), or has a
ROAM_EXCLUDE property that is not \"nil\", as the daemon's index
reads them.  Text from there is not sent: cut out of the buffer, it
no longer says that it is private.  In a buffer editing a source
block (\\[org-edit-special]), also where the block is in its note.
Else always nil outside Org mode."
  (or (when-let ((origin (arcology-oracle--src-edit-origin)))
        (with-current-buffer (marker-buffer origin)
          (arcology-oracle--private-here-p (marker-position origin))))
      (arcology-oracle--private-in-org-p pos)))

(defun arcology-oracle--private-in-org-p (pos)
  "Return non-nil when POS (or point) is private by this Org buffer's own text.
See `arcology-oracle--private-here-p', which also asks the note of a
source block being edited."
  (and (derived-mode-p 'org-mode)
       (save-excursion
         (save-restriction
           (widen)
           (goto-char (or pos (point)))
           (let* ((org-use-tag-inheritance t)
                  (org-tags-exclude-from-inheritance nil)
                  ;; As the buffer says now: `org-file-tags' is only read again by
                  ;; `org-mode-restart', not after an edit or an undo of #+filetags.
                  (org-file-tags (arcology-oracle--file-tags))
                  (tags (if (org-before-first-heading-p)
                            org-file-tags
                          (org-get-tags)))
                  (exclude (org-entry-get nil "ROAM_EXCLUDE" t)))
             (or (arcology-oracle--private-tags-p tags)
                 (and exclude (not (equal exclude "nil")))))))))

(defun arcology-oracle--private-between-p (beg end)
  "Return non-nil when any of the text from BEG to END is in a private part.
That is: BEG, or a heading between BEG and END, is where
`arcology-oracle--private-here-p' says so.  A region that starts in
a public heading and reaches into a private one below it is private
too: cut out of its buffer, it would no longer say so.  In a buffer
editing a source block, also where the block is in its note."
  (or (and (arcology-oracle--src-edit-origin) (arcology-oracle--private-here-p beg))
      (and (derived-mode-p 'org-mode)
           (save-excursion
             (save-restriction
               (widen)
               (or (arcology-oracle--private-here-p beg)
                   (progn
                     (goto-char beg)
                     (let ((found nil))
                       (while (and (not found) (re-search-forward org-outline-regexp-bol end t))
                         (setq found (arcology-oracle--private-here-p (match-beginning 0))))
                       found))))))))

(provide 'arcology-oracle-privacy)

;;; arcology-oracle-privacy.el ends here
