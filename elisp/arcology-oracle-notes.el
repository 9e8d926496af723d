;;; arcology-oracle-notes.el --- Headings, roam directory and visiting notes for arcology-oracle -*- lexical-binding: t -*-

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

;; Where the daemon's notes are in this Emacs: the roam directory as
;; the daemon sees it, the heading at point described for a request,
;; and visiting a result (by org-roam ID, by file and line, or through
;; org-id).  The similar notes and the ask commands share these.

;;; Code:

(require 'subr-x)
(require 'org)
(require 'arcology-oracle-http)

(declare-function org-roam-node-file "ext:org-roam-node" (node) t)
(declare-function org-roam-node-point "ext:org-roam-node" (node) t)
(declare-function org-roam-node-from-id "ext:org-roam-node" (id))
(defvar org-roam-directory)

;;; Roam directory

(defvar arcology-oracle--server-roam-dirs nil
  "Alist of (URL . DIRECTORY): each daemon's roam directory from /status.")

(defun arcology-oracle--roam-dir ()
  "Return the daemon's roam directory as known now, or nil.
That is `arcology-oracle-roam-directory', else what the daemon's
/status said, else `org-roam-directory'."
  (let ((dir (or arcology-oracle-roam-directory
                 (cdr (assoc (arcology-oracle--base-url)
                             arcology-oracle--server-roam-dirs))
                 (bound-and-true-p org-roam-directory))))
    (and dir (file-name-as-directory (expand-file-name dir)))))

(defun arcology-oracle--with-roam-dir (callback)
  "Call CALLBACK with the daemon's roam directory (or nil).
Asks the daemon's /status once per URL when nothing is configured;
CALLBACK may run later, from a process sentinel."
  (let ((url (arcology-oracle--base-url)))
    (if (or arcology-oracle-roam-directory
            (assoc url arcology-oracle--server-roam-dirs))
        (funcall callback (arcology-oracle--roam-dir))
      (arcology-oracle--json
       "GET" "/status"
       :callback (lambda (status)
                   (let ((dir (alist-get 'roam_dir status)))
                     (when (and (stringp dir) (file-directory-p dir))
                       (push (cons url dir) arcology-oracle--server-roam-dirs)))
                   (funcall callback (arcology-oracle--roam-dir)))
       :errback (lambda (_message) (funcall callback (arcology-oracle--roam-dir)))))))

(defun arcology-oracle--relative-file (file dir)
  "Return FILE relative to DIR when it lies under DIR, else nil."
  (when (and file dir)
    (let ((file (file-truename file))
          (dir (file-name-as-directory (file-truename dir))))
      (when (string-prefix-p dir file)
        (substring file (length dir))))))

;;; Org context

(defun arcology-oracle--heading-start ()
  "Return the start of the heading at point, or `point-min' before the first."
  (save-excursion
    (if (org-before-first-heading-p)
        (point-min)
      (org-back-to-heading t)
      (point))))

(defun arcology-oracle--heading-context ()
  "Describe the heading at point as a plist.
Keys: :start (position), :line (1-based, ignoring narrowing),
:title, :olp (ancestor titles), :text (the heading and its body,
without sub-headings) and :node-id (the ID of the nearest
enclosing org-roam node, possibly a file-level one)."
  (save-excursion
    (save-restriction
      (widen)
      (let* ((start (arcology-oracle--heading-start))
             (first (= start (point-min)))
             (title (if (and first (not (org-at-heading-p)))
                        (or (cadr (assoc "TITLE" (org-collect-keywords '("TITLE"))))
                            (and buffer-file-name
                                 (file-name-base buffer-file-name))
                            (buffer-name))
                      (goto-char start)
                      (org-get-heading t t t t)))
             (olp (unless (and first (not (org-at-heading-p)))
                    (goto-char start)
                    (org-get-outline-path)))
             (end (progn (goto-char start)
                         (if (org-at-heading-p) (end-of-line) (goto-char (point-min)))
                         (if (re-search-forward org-outline-regexp-bol nil t)
                             (match-beginning 0)
                           (point-max)))))
        (goto-char start)
        (list :start start
              :line (line-number-at-pos start t)
              :title (substring-no-properties (or title ""))
              :olp (mapcar #'substring-no-properties olp)
              :text (buffer-substring-no-properties start (min end (+ start 8000)))
              :node-id (org-entry-get nil "ID" t))))))

(defun arcology-oracle--outline (result)
  "Return the outline path of RESULT, ending with its heading, as a string."
  (let ((olp (append (alist-get 'olp result) (list (alist-get 'heading result)))))
    (mapconcat #'org-link-display-format (delq nil olp) " › ")))

(defun arcology-oracle--one-line (text width)
  "Return TEXT on one line, cut to WIDTH columns."
  (truncate-string-to-width
   (string-trim (replace-regexp-in-string "[ \t\n\r]+" " " (or text ""))) width nil nil "…"))

;;; Visiting results

(defun arcology-oracle--roam-node-location (id)
  "Return (FILE . POSITION) of the org-roam node ID, or nil.
Uses org-roam's database when org-roam is loaded; never signals."
  (when (and id (fboundp 'org-roam-node-from-id))
    (condition-case nil
        (when-let* ((node (org-roam-node-from-id id))
                    (file (org-roam-node-file node)))
          (cons file (or (org-roam-node-point node) 1)))
      (error nil))))

(defun arcology-oracle--file-location (result)
  "Return (FILE . LINE) of RESULT when its file exists here, else nil."
  (when-let* ((dir (arcology-oracle--roam-dir))
              (rel (alist-get 'file result))
              (file (expand-file-name rel dir)))
    (when (file-exists-p file)
      (cons file (or (alist-get 'line result) 1)))))

(defun arcology-oracle--source-link (source)
  "Return an org link to SOURCE (a source or result of the daemon)."
  (let* ((title (org-link-display-format (or (alist-get 'title source) "?")))
         (heading (alist-get 'heading source))
         (label (if (and heading (not (equal heading title)))
                    (concat title " › " (org-link-display-format heading))
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

(defun arcology-oracle--visit (result)
  "Visit the note of RESULT (a search or similar result, or a source).
Tries, in order: the heading's own ID through org-roam, the file
and line under the roam directory, the enclosing node's ID
through org-roam, then `org-id-find' when org-id's locations are
loaded."
  (let* ((heading-id (alist-get 'heading_id result))
         (node-id (alist-get 'node_id result))
         (from-list (or (window-parameter nil 'window-side)
                        (derived-mode-p 'arcology-oracle-similar-buffer-mode 'org-roam-mode)))
         location line)
    (cond
     ((setq location (arcology-oracle--roam-node-location heading-id)))
     ((setq location (arcology-oracle--file-location result))
      (setq line (cdr location)))
     ((setq location (arcology-oracle--roam-node-location node-id)))
     ;; Only when org-id has its locations loaded: loading them may scan files.
     ((let ((found (and (or heading-id node-id)
                        (bound-and-true-p org-id-locations)
                        (ignore-errors (org-id-find (or heading-id node-id))))))
        (setq location found)))
     (t (user-error "Cannot find %s here: is `arcology-oracle-roam-directory' right?"
                    (or (alist-get 'file result) (alist-get 'title result)))))
    (let ((buffer (find-file-noselect (car location))))
      (if from-list
          (pop-to-buffer buffer '(display-buffer-use-some-window (inhibit-same-window . t)))
        (pop-to-buffer-same-window buffer))
      (if line
          (arcology-oracle--goto-heading line (alist-get 'heading result))
        (widen)
        (goto-char (cdr location)))
      (when (derived-mode-p 'org-mode) (org-show-context))
      (recenter 0))))

(defun arcology-oracle-visit-result ()
  "Visit the note listed at point (similar notes or the org-roam buffer)."
  (interactive)
  (let ((result (get-text-property (point) 'arcology-oracle-result)))
    (unless result (user-error "No note at point"))
    (arcology-oracle--visit result)))

(provide 'arcology-oracle-notes)

;;; arcology-oracle-notes.el ends here
