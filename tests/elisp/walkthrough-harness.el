;;; walkthrough-harness.el --- What the walkthrough test reads from its Emacs -*- lexical-binding: t -*-

;;; Commentary:

;; Loaded first by the init file of tests/elisp/test_walkthrough.py, before the user's
;; own lines and the README's.  It changes nothing a user sees: it starts a server
;; (so the test can ask with emacsclient), keeps every message, records every
;; error a command signals, and writes what the test asks for to a JSON file.

;;; Code:

(require 'json)
(require 'server)
(require 'subr-x)

(defvar walk-errors nil
  "Errors signalled by commands, newest first, as strings.")

(setq message-log-max t)

(let ((original command-error-function))
  (setq command-error-function
        (lambda (data context signal)
          ;; SIGNAL, when a symbol, is what *Messages* names before the message.
          (push (format "%s%s%s" (if context (format "%s " context) "")
                        (if (and signal (symbolp signal)) (format "%s: " signal) "")
                        (error-message-string data))
                walk-errors)
          (funcall original data context signal))))

(setq server-socket-dir (getenv "WALK_SERVER_DIR")
      server-name "walk")
;; After the init file and the start-up screen: the socket appearing tells the test
;; that Emacs is ready for keys, whether the init file failed or not.
(add-hook 'emacs-startup-hook #'server-start 90)

(defun walk--buffer-text (name)
  "The text of buffer NAME without properties, or nil."
  (when-let ((buffer (get-buffer name)))
    (with-current-buffer buffer
      (save-restriction (widen) (buffer-substring-no-properties (point-min) (point-max))))))

(defun walk-write-state (file)
  "Write to FILE what the test reads beside the screen."
  (let ((state
         `((messages . ,(or (walk--buffer-text "*Messages*") ""))
           (warnings . ,(or (walk--buffer-text "*Warnings*") ""))
           (errors . ,(vconcat (reverse walk-errors)))
           (kill . ,(or (car kill-ring) ""))
           (frame_width . ,(frame-width))
           (buffers . ,(vconcat (mapcar #'buffer-name (buffer-list))))
           (windows . ,(vconcat
                        (mapcar (lambda (w)
                                  `((id . ,(format "%s" w))
                                    (buffer . ,(buffer-name (window-buffer w)))
                                    (width . ,(window-total-width w))
                                    (height . ,(window-total-height w))
                                    (side . ,(or (window-parameter w 'window-side) :json-false))
                                    (selected . ,(if (eq w (selected-window)) t :json-false))
                                    (point_line . ,(with-current-buffer (window-buffer w)
                                                     (line-number-at-pos (window-point w))))
                                    (point_text . ,(with-current-buffer (window-buffer w)
                                                     (save-excursion
                                                       (goto-char (window-point w))
                                                       (buffer-substring-no-properties
                                                        (line-beginning-position) (line-end-position)))))))
                                (window-list nil 'never)))))))
    (with-temp-file file
      (insert (json-encode state))))
  t)

(defun walk-write-buffer (name file)
  "Write the text of buffer NAME to FILE (empty when there is none)."
  (with-temp-file file (insert (or (walk--buffer-text name) "")))
  t)

(provide 'walkthrough-harness)

;;; walkthrough-harness.el ends here
