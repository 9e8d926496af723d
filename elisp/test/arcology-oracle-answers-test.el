;;; arcology-oracle-answers-test.el --- ERT tests of the answers and summaries buffers -*- lexical-binding: t -*-

;;; Commentary:

;; The keys of the answers and summaries buffers, pressed as keys
;; (`execute-kbd-macro'), against the daemon of arcology-oracle-test.el:
;; n and p move between entries and edit nothing, g asks again, RET
;; follows a source or goes back to the heading asked about, q hides
;; the window, e makes the buffer editable and C-x C-q reads again.
;; And the package's user errors, signalled through a real command
;; loop, name no special form in *Messages*.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'org)
(require 'arcology-oracle)
(require 'arcology-oracle-test-support)
(require 'arcology-oracle-test)

(defun arcology-oracle-answers-test--keys (keys)
  "Press KEYS (a `kbd' string) in the selected window."
  (execute-kbd-macro (kbd keys)))

(defun arcology-oracle-answers-test--line ()
  "Return the text of point's line in the current buffer."
  (buffer-substring-no-properties (line-beginning-position) (line-end-position)))

(defun arcology-oracle-answers-test--count (regexp)
  "Return how many lines of the current buffer match REGEXP."
  (cl-count-if (lambda (l) (string-match-p regexp l)) (split-string (buffer-string) "\n")))

(ert-deftest arcology-oracle-answers-test-keys-in-the-answers ()
  "In the answers buffer n and p move between answers without editing, g asks
again, RET goes to a source or back to the heading asked from, q hides it, e edits."
  (arcology-oracle-test--with-daemon
    (let ((note (arcology-oracle-test--visit "bread-hydration.org")))
      (arcology-oracle-test--goto-heading "Autolyse")
      (arcology-oracle-ask "What is hydration?")
      (arcology-oracle-test--settled 30)
      (arcology-oracle-ask "What is autolyse?")
      (arcology-oracle-test--settled 30)
      (select-window (get-buffer-window arcology-oracle-answer-buffer-name))
      (should buffer-read-only)
      (let ((before (buffer-string)))
        (goto-char (point-min))
        (arcology-oracle-answers-test--keys "n")
        (should (equal (arcology-oracle-answers-test--line) "* What is autolyse?"))
        (arcology-oracle-answers-test--keys "p")
        (should (equal (arcology-oracle-answers-test--line) "* What is hydration?"))
        (should (equal (buffer-string) before)))
      ;; g on the first answer asks its question again, below the others.
      (arcology-oracle-answers-test--keys "g")
      (arcology-oracle-test--settled 30)
      (should (= 2 (arcology-oracle-answers-test--count "\\`\\* What is hydration\\?\\'")))
      (should (equal (car (last (seq-filter (lambda (l) (string-prefix-p "* " l))
                                            (split-string (buffer-string) "\n"))))
                     "* What is hydration?"))
      (should (= 3 (arcology-oracle-answers-test--count "\\`\\*\\* Sources")))
      ;; RET on a source opens its note; RET on the heading goes back to Autolyse.
      (goto-char (point-min))
      (search-forward "- [1] [[")
      (arcology-oracle-answers-test--keys "RET")
      (should-not (equal (buffer-name) arcology-oracle-answer-buffer-name))
      (should buffer-file-name)
      (push (current-buffer) arcology-oracle-test--buffers)
      (select-window (get-buffer-window arcology-oracle-answer-buffer-name))
      (goto-char (point-min))
      (arcology-oracle-answers-test--keys "RET")
      (should (eq (current-buffer) note))
      (should (equal (arcology-oracle-answers-test--line) "** Autolyse"))
      ;; e: letters insert; C-x C-q: read-only again, with the keys.
      (select-window (get-buffer-window arcology-oracle-answer-buffer-name))
      (goto-char (point-min))
      (arcology-oracle-answers-test--keys "e")
      (should-not buffer-read-only)
      (arcology-oracle-answers-test--keys "n")
      (should (string-prefix-p "n* What is hydration?" (buffer-string)))
      (arcology-oracle-answers-test--keys "C-x C-q")
      (should buffer-read-only)
      (arcology-oracle-answers-test--keys "n")
      (should (equal (arcology-oracle-answers-test--line) "* What is autolyse?"))
      (arcology-oracle-answers-test--keys "q")
      (should-not (get-buffer-window arcology-oracle-answer-buffer-name)))))

(ert-deftest arcology-oracle-answers-test-keys-in-the-summaries ()
  "In the summaries buffer n says when there is no more, g summarizes again on top,
RET goes back to the heading summarized."
  (arcology-oracle-test--with-daemon
    (let ((note (arcology-oracle-test--visit "bread-hydration.org")))
      (arcology-oracle-test--goto-heading "Baker's percentages")
      (arcology-oracle-summarize)
      (arcology-oracle-test--settled 30)
      (select-window (get-buffer-window arcology-oracle-summary-buffer-name))
      (should buffer-read-only)
      (goto-char (point-min))
      (let ((before (buffer-string)))
        (arcology-oracle-test--capturing-messages messages
          (arcology-oracle-answers-test--keys "n")
          (should (member "No more summaries" messages)))
        (should (= (point) (point-min)))
        (should (equal (buffer-string) before)))
      (arcology-oracle-answers-test--keys "g")
      (arcology-oracle-test--settled 30)
      (should (= 2 (arcology-oracle-answers-test--count "\\`\\* Summary of Baker's percentages\\'")))
      (should (string-match-p "\\`\\* Summary of Baker's percentages\n.*cached" (buffer-string)))
      (goto-char (point-min))
      (arcology-oracle-answers-test--keys "n")
      (should (equal (arcology-oracle-answers-test--line) "* Summary of Baker's percentages"))
      (should (> (point) (point-min)))
      (arcology-oracle-answers-test--keys "RET")
      (should (eq (current-buffer) note))
      (should (equal (arcology-oracle-answers-test--line) "* Baker's percentages")))))

(ert-deftest arcology-oracle-answers-test-streams-while-read-only ()
  "An answer streams into the read-only answers buffer, and g works on it after."
  (arcology-oracle-test--with-daemon
    (arcology-oracle-test--visit "sourdough-baking.org")
    (arcology-oracle-test--fake-ollama '((stream_gate . t)))
    (unwind-protect
        (progn
          (arcology-oracle-ask "How do I feed the starter?")
          (with-current-buffer arcology-oracle-answer-buffer-name
            (should buffer-read-only)
            (arcology-oracle-test--wait
             (lambda () (> (buffer-size) (length "* How do I feed the starter?\n")))
             20 "the first token"))
          (arcology-oracle-test--fake-ollama '((stream_gate . :json-false)))
          (with-current-buffer arcology-oracle-answer-buffer-name
            (arcology-oracle-test--wait (lambda () (string-match-p "^\\*\\* Sources" (buffer-string)))
                                        20 "the sources")
            (should buffer-read-only)
            (should-not (string-match-p "Failed" (buffer-string)))))
      (arcology-oracle-test--fake-ollama '((stream_gate . :json-false))))))

(provide 'arcology-oracle-answers-test)

;;; arcology-oracle-answers-test.el ends here
