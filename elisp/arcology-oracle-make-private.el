;;; arcology-oracle-make-private.el --- Make a heading or a note private for arcology-oracle -*- lexical-binding: t -*-

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

;; `arcology-oracle-make-private' tags the heading at point with the
;; first of `arcology-oracle-private-tags' (before the first heading,
;; the file, in its #+filetags), so that the daemon drops it (and its
;; subtree, or the whole file) from the index when the file is saved.

;;; Code:

(require 'org)
(require 'org-element)
(require 'arcology-oracle)
(require 'arcology-oracle-notes)

;;;###autoload
(defun arcology-oracle-make-private ()
  "Tag the heading at point, or the file, as private.
The tag is the first of `arcology-oracle-private-tags'.  Before the
first heading, the tag goes into the file's #+filetags
\(a line is added after the #+title when there is none), which
makes the whole file private; a file already private by its
#+filetags, or a heading already private (see
`arcology-oracle--private-here-p'), is left as it is.  Saving the
file then takes the heading and its subtree, or the whole file, out
of the daemon's index.
In the org-roam buffer, the node it shows is tagged, in its note (see
`arcology-oracle--at-shown-node'); in another list, nothing is."
  (interactive)
  (unless (arcology-oracle--at-shown-node #'arcology-oracle-make-private)
    (arcology-oracle--refuse-in-list
     (substitute-command-keys "\\[arcology-oracle-make-private] tags a heading in a note"))
    (unless (derived-mode-p 'org-mode)
      (arcology-oracle--user-error "Making a note private needs an Org buffer"))
    (when buffer-read-only
      ;; Org's own error named `org-toggle-tag' and printed the buffer as
      ;; #<buffer ...>; the answers and summaries buffers are not notes.
      (arcology-oracle--user-error
       (if (arcology-oracle--visited-file)
           "Buffer %s is read-only (%s makes it editable): nothing was tagged"
         "Buffer %s is not a note: nothing was tagged")
       (buffer-name) (substitute-command-keys "\\[read-only-mode]")))
    (let ((tag (car arcology-oracle-private-tags)))
      (unless tag
        (arcology-oracle--user-error "`arcology-oracle-private-tags' is empty"))
      (cond
       ((save-excursion (save-restriction (widen) (org-before-first-heading-p)))
        (arcology-oracle--make-file-private tag))
       ;; Tagged again, Org would realign the line, or add :private: beside :PRIVATE:.
       ((arcology-oracle--private-in-org-p (save-excursion (org-back-to-heading t) (point)))
        (arcology-oracle--message "This heading is already private (a tag or ROAM_EXCLUDE on it, above it or on the file): nothing changed"))
       (t
        (save-excursion
          (org-back-to-heading t)
          (org-toggle-tag tag 'on))
        (arcology-oracle--message "Tagged :%s:; %s" tag (arcology-oracle--private-then "the heading")))))))

(defun arcology-oracle--private-then (what)
  "Say what tagging WHAT private does, in the current buffer.
Emacs sends nothing of it from now on; the daemon's index changes
when the file is saved.  A buffer without a file, or whose file the
daemon does not read (outside its roam directory, as known now, or
left out there: see `arcology-oracle--unread-reason'), is in no
index: there is nothing to save for.  A buffer not shown in the
selected window (tagged from the org-roam buffer) is named."
  (let* ((file (arcology-oracle--visited-file))
         (dir (and file (arcology-oracle--roam-dir)))
         (rel (and dir (arcology-oracle--relative-file file dir)))
         (unread (cond ((not dir) nil)
                       ((not rel) (concat "not under " (abbreviate-file-name dir)))
                       (t (arcology-oracle--unread-reason rel)))))
    (cond ((not file)
           (format "Emacs sends nothing of %s (this buffer has no file: the daemon never read it)" what))
          (unread
           (format "%s is not among the daemon's notes (%s): Emacs sends nothing of %s"
                   (file-name-nondirectory file) unread what))
          (t (format "save %s to take %s out of the index"
                     (if (eq (current-buffer) (window-buffer)) "the file" (buffer-name))
                     what)))))

(defun arcology-oracle--keyword-search (key regexp limit)
  "Search forward for REGEXP before LIMIT on a line that is keyword KEY.
That is, a line Org reads as that keyword: one inside a block is
skipped, as `org-collect-keywords' skips it.  Return non-nil with
the match data of REGEXP, or nil."
  (let (found)
    (while (and (not found) (re-search-forward regexp limit t))
      (let ((element (save-match-data (org-element-at-point))))
        (setq found (and (eq (org-element-type element) 'keyword)
                         (equal (org-element-property :key element) key)))))
    found))

(defun arcology-oracle--make-file-private (tag)
  "Add TAG to the #+filetags of the current buffer; change nothing else.
The tag ends the first #+filetags line before the first heading
\(\":a:b:\" becomes \":a:b:TAG:\", \"a b\" becomes \"a b :TAG:\");
without one, a line \"#+filetags: :TAG:\" goes after the #+title
\(in its letter case), else after the file's property drawer (which
may follow comment lines), else first (after a -*- line).  Lines
inside blocks are not keywords: they are left alone.  One insertion,
one undo; point stays where it is.  A file whose #+filetags already
hold crypt or one of `arcology-oracle-private-tags' is left alone."
  (save-excursion
    (save-restriction
      (widen)
      (let ((limit (save-excursion (goto-char (point-min))
                                   (if (re-search-forward org-outline-regexp-bol nil t)
                                       (match-beginning 0)
                                     (point-max))))
            (case-fold-search t))
        (if (arcology-oracle--private-tags-p (arcology-oracle--file-tags))
            (arcology-oracle--message "This file is already private by its #+filetags: nothing changed")
          (goto-char (point-min))
          (if (arcology-oracle--keyword-search
               "FILETAGS" "^[ \t]*#\\+filetags:\\([ \t]*\\)\\(.*?\\)[ \t]*$" limit)
              (let ((blank (match-string 1))
                    (value (match-string 2)))
                (goto-char (match-end 2))
                (insert (cond ((string-suffix-p ":" value) (concat tag ":"))
                              ((and (string-empty-p value) (not (string-empty-p blank)))
                               (concat ":" tag ":"))
                              (t (concat " :" tag ":")))))
            (let* ((title (progn (goto-char (point-min))
                                 (and (arcology-oracle--keyword-search
                                       "TITLE" "^[ \t]*#\\+\\(title\\):" limit)
                                      (match-string 1))))
                   (line (concat (if (equal title "TITLE") "#+FILETAGS: :" "#+filetags: :") tag ":")))
              (cond
               (title (forward-line 1))
               ;; The file's drawer may follow comment (and blank) lines.
               ((progn (goto-char (point-min))
                       (while (and (not (eobp)) (or (looking-at-p org-comment-regexp)
                                                    (looking-at-p "[ \t]*$")))
                         (forward-line 1))
                       (looking-at org-property-drawer-re))
                (goto-char (match-end 0))
                (forward-line 1))
               (t (goto-char (point-min))
                  (when (looking-at-p ".*-\\*-.*-\\*-") (forward-line 1))))
              ;; After a last line without a newline, the new line is last, as it was.
              (insert (if (bolp) (concat line "\n") (concat "\n" line)))))
          (org-set-regexps-and-options t)
          (arcology-oracle--message "Tagged the file :%s: (#+filetags); %s" tag (arcology-oracle--private-then "the whole file")))))))

(provide 'arcology-oracle-make-private)

;;; arcology-oracle-make-private.el ends here
