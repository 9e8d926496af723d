;;; arcology-oracle-visit.el --- Visiting the notes arcology-oracle lists and cites -*- lexical-binding: t -*-

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

;; Visiting a result of the daemon, or a source an answer cites: by its
;; org-roam ID, by file and line under the roam directory, or through
;; org-id, at its heading even when the note was edited since.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'url-util)
(require 'org)
(require 'arcology-oracle-roam-dir)
(require 'arcology-oracle-results)

(declare-function org-roam-node-file "ext:org-roam-node" (node) t)
(declare-function org-roam-node-point "ext:org-roam-node" (node) t)
(declare-function org-roam-node-from-id "ext:org-roam-node" (id))

(defun arcology-oracle--roam-node-location (id)
  "Return (FILE . POSITION) of the org-roam node ID, or nil.
Uses org-roam's database when org-roam is loaded; never signals.
Nil when that file is gone (deleted or moved outside Emacs, which
org-roam's database does not see): visiting it made an empty new
file."
  (when (and id (fboundp 'org-roam-node-from-id))
    (condition-case nil
        (when-let* ((node (org-roam-node-from-id id))
                    (file (org-roam-node-file node)))
          (when (or (file-exists-p file) (find-buffer-visiting file))
            (cons file (or (org-roam-node-point node) 1))))
      (error nil))))

(defun arcology-oracle--at-id (id)
  "Move to the entry with ID when point is not at it.
org-roam's database keeps a node's position as of its last sync: a
note edited since (a line added above the node) puts it elsewhere,
so the entry is looked for by its :ID: in the buffer."
  (when (and id (derived-mode-p 'org-mode)
             (not (equal (ignore-errors (org-entry-get nil "ID")) id)))
    (when-let ((pos (org-find-entry-with-id id)))
      (goto-char pos))))

(defun arcology-oracle--file-location (result)
  "Return (FILE . LINE) of RESULT when its file exists here, else nil."
  (when-let* ((dir (arcology-oracle--roam-dir))
              (rel (alist-get 'file result))
              (file (expand-file-name rel dir)))
    (when (file-exists-p file)
      (cons file (or (alist-get 'line result) 1)))))

(defun arcology-oracle--source-link (source)
  "Return an org link to SOURCE (a source or result of the daemon)."
  (let* ((title (arcology-oracle--title-text (or (alist-get 'title source) "?")))
         (heading (and (stringp (alist-get 'heading source))
                       (arcology-oracle--title-text (alist-get 'heading source))))
         (label (if (and heading (not (equal heading title)))
                    (concat title " › " heading)
                  title))
         (id (or (alist-get 'heading_id source) (alist-get 'node_id source)))
         (file (car (arcology-oracle--file-location source))))
    (org-link-make-string
     (cond (id (concat "id:" id))
           (file (format "file:%s::%d" file (or (alist-get 'line source) 1)))
           (t (concat "file:" (or (alist-get 'file source) ""))))
     (replace-regexp-in-string "[][]" "" label))))

(defun arcology-oracle--goto-heading (line heading)
  "Go to LINE, or to the heading titled HEADING nearest to it.
The index may lag behind the file by a few lines."
  (widen)
  (goto-char (point-min))
  (forward-line (1- line))
  (when (and heading (> line 1) (derived-mode-p 'org-mode)
             (not (and (org-at-heading-p)
                       (equal (org-get-heading t t t t) heading))))
    (let ((target (point))
          (re (format org-complex-heading-regexp-format (regexp-quote heading)))
          best)
      (goto-char (point-min))
      (while (re-search-forward re nil t)
        (let ((pos (line-beginning-position)))
          (when (or (not best) (< (abs (- pos target)) (abs (- best target))))
            (setq best pos))))
      (goto-char (or best target)))))

(defun arcology-oracle--visit (result &optional asked)
  "Visit the note of RESULT (a search or similar result, or a source).
Tries, in order: the heading's own ID through org-roam, the file
and line under the roam directory, the enclosing node's ID
through org-roam, then `org-id-find' when org-id's locations are
loaded.  A file not under the directory the daemon said is looked
for again once the daemon has said it again (ASKED non-nil: it
has), as `arcology-oracle--among-notes' does."
  (let* ((heading-id (alist-get 'heading_id result))
         (node-id (alist-get 'node_id result))
         (from-list (or (window-parameter nil 'window-side)
                        (derived-mode-p 'arcology-oracle-similar-buffer-mode 'arcology-oracle-answers-mode
                                       'org-roam-mode)))
         location line id)
    (cond
     ((setq location (arcology-oracle--roam-node-location heading-id))
      (setq id heading-id))
     ((setq location (arcology-oracle--file-location result))
      (setq line (cdr location)))
     ((setq location (arcology-oracle--roam-node-location node-id))
      (setq id node-id))
     ;; Only when org-id has its locations loaded: loading them may scan files.
     ((let ((found (and (or heading-id node-id)
                        (bound-and-true-p org-id-locations)
                        (ignore-errors (org-id-find (or heading-id node-id))))))
        (setq location found)))
     ((and (alist-get 'file result) (not asked) (arcology-oracle--roam-dir-from-daemon-p))
      (arcology-oracle--visit-asking-again result))
     ((and (alist-get 'file result) (arcology-oracle--roam-dir)
           (file-directory-p (arcology-oracle--roam-dir)))
      (arcology-oracle--user-error "%s is not in %s any more: deleted or moved since it was listed"
                                   (alist-get 'file result) (arcology-oracle--roam-dir)))
     (t (arcology-oracle--user-error "Cannot find %s here: is `arcology-oracle-roam-directory' right?"
                    (or (alist-get 'file result) (alist-get 'title result)))))
    (when-let ((buffer (and location (find-file-noselect (car location)))))
      (if from-list
          (pop-to-buffer buffer '((display-buffer-reuse-window display-buffer-use-some-window) (inhibit-same-window . t)))
        (pop-to-buffer-same-window buffer))
      (if line
          ;; A link suggestion's `heading' is an object: where the link goes
          ;; in the note being read, not a heading of the note visited.
          (arcology-oracle--goto-heading line (let ((heading (alist-get 'heading result)))
                                                (and (stringp heading) heading)))
        (widen)
        (goto-char (cdr location))
        (arcology-oracle--at-id id))
      (when (derived-mode-p 'org-mode) (org-show-context))
      (recenter 0))))

(defun arcology-oracle--visit-asking-again (result)
  "Visit RESULT once the daemon has said again where its notes are.
From the window selected now; a `user-error' then is shown in the
echo area."
  (let ((window (selected-window)))
    (arcology-oracle--forget-roam-dir (arcology-oracle--base-url))
    (arcology-oracle--with-roam-dir
     (lambda (_roam-dir)
       (when (window-live-p window) (select-window window))
       (condition-case err
           (arcology-oracle--visit result t)
         (user-error (arcology-oracle--message "%s" (error-message-string err))))))))

(defun arcology-oracle--open-source-at-point ()
  "Visit the source whose link is at point, as `arcology-oracle--visit' does.
For `org-open-at-point-functions' in the answers buffers: a source
is found by its heading's line when org-roam does not know its ID
yet, and opens at that heading, not at its note's first line.
Return non-nil when there was a source at point."
  (when-let ((source (get-text-property (point) 'arcology-oracle-source)))
    (arcology-oracle--visit source)
    t))

(defun arcology-oracle-visit-result (&optional event)
  "Visit the note listed at point (similar notes or the org-roam buffer).
From a mouse click, EVENT, the note clicked: the middle button, or
the left one on an entry, as on a link (see
`mouse-1-click-follows-link')."
  (interactive (list last-nonmenu-event))
  (when (mouse-event-p event)
    (mouse-set-point event))
  (let ((result (get-text-property (point) 'arcology-oracle-result)))
    (unless result (arcology-oracle--user-error "No note at point"))
    (arcology-oracle--visit result)))

;;; Sources cited by a conversation's answers

(defun arcology-oracle--cited-source-at-point ()
  "Return the source cited on the `- [N] ...' line at point, or nil.
An answer the daemon writes into a conversation lists its sources as
plain text (so a cited note gains no org-roam backlink) and keeps
them, in citation order, in its `SOURCES' property: `ID::REL::LINE'
for a heading of a node (opened at that heading, and before org-roam
knows the ID), `file:REL::LINE' for a heading without one, or, in
answers written before, a bare ID.  ID and REL are percent-encoded.
The heading is looked for near LINE by its title, the end of the
line's `Title: Heading'.  In the answers buffers a `- [N]' line holds
its source as a link.  The result is a source as
`arcology-oracle--visit' takes it."
  (save-excursion
    (beginning-of-line)
    (when (looking-at "[ \t]*- \\[\\([0-9]+\\)\\] ")
      (let ((n (string-to-number (match-string 1)))
            (label (string-replace "\u200b" "" (buffer-substring-no-properties (match-end 0) (line-end-position)))))
        (or (let ((pos (text-property-not-all (point) (line-end-position) 'arcology-oracle-source nil)))
              (and pos (get-text-property pos 'arcology-oracle-source)))
            (when (and (> n 0) (derived-mode-p 'org-mode))
              (let ((source (arcology-oracle--cited-target
                             (nth (1- n) (split-string (or (org-entry-get nil "SOURCES") ""))))))
                ;; "Title: Heading" (or the title alone): the heading to look for near
                ;; the line, which moves when the note is edited.
                (if (and source (alist-get 'line source))
                    `((heading . ,(if (string-match ".*: \\(.+\\)\\'" label) (match-string 1 label) label))
                      ,@source)
                  source))))))))

(defun arcology-oracle--cited-target (target)
  "Return TARGET, one word of a `SOURCES' property, as a source; nil for nil."
  (cl-flet ((unhex (rel) (decode-coding-string (url-unhex-string rel) 'utf-8)))
    (cond ((null target) nil)
          ((string-match "\\`file:\\(.+\\)::\\([0-9]+\\)\\'" target)
           (let ((rel (match-string 1 target)) (line (match-string 2 target)))
             `((file . ,(unhex rel)) (line . ,(string-to-number line)))))
          ((string-match "\\`\\(.+?\\)::\\(.+\\)::\\([0-9]+\\)\\'" target)
           (let ((id (match-string 1 target)) (rel (match-string 2 target)) (line (match-string 3 target)))
             `((node_id . ,(unhex id)) (file . ,(unhex rel)) (line . ,(string-to-number line)))))
          (t `((heading_id . ,target) (node_id . ,target))))))

(defun arcology-oracle--open-cited-source ()
  "Visit the source cited on the line at point; non-nil when there was one.
For `org-open-at-point-functions', so that \\[org-open-at-point] on a
line of an answer's `Sources:' list opens that source."
  (when-let ((source (arcology-oracle--cited-source-at-point)))
    (arcology-oracle--visit source)
    t))

;;;###autoload
(defun arcology-oracle-visit-cited-source ()
  "Visit the source cited on the line at point of a conversation's answer."
  (interactive)
  (unless (arcology-oracle--open-cited-source)
    (arcology-oracle--user-error "No cited source on this line (a `- [N]' line of an answer's Sources:)")))

(provide 'arcology-oracle-visit)

;;; arcology-oracle-visit.el ends here
